import type { Logger } from "pino";
import { estimateTokens, latinLengthOf, promptTokens, truncateLatin } from "../model/tokens.js";
import type { ChatMessage, ModelCall, PromptWindow } from "../model/types.js";
import type { Store } from "../store/store.js";
import type { SummaryRow } from "../store/summaries.js";
import { usageRow } from "../store/usage.js";
import { summarize } from "../text.js";
import { type PromptInput, type PromptPlan, planPrompt, repairPairs } from "./context.js";
import type { LoopDeps } from "./loop-deps.js";
import { keepMark, windowHistory, withMark } from "./window.js";

/** The first words of every compaction request (the fake model in the tests knows them too). */
export const COMPACTION_MARKER = "You keep the running summary of a conversation";

/** Tool results enter a compaction request shortened to this: the summary says what they showed, it does not copy them. */
const RESULT_CHARS = 300;
const MESSAGE_CHARS = 1500;

export interface CompactionDeps extends LoopDeps {
  log?: Logger;
}

/** The session a prompt is built for, and the run's abort signal. */
export interface CompactionTarget {
  sessionId: number;
  sessionKey: string;
  signal: AbortSignal;
  /** The run the compaction happens in (its tokens count toward the run's budget); absent for `/compact`. */
  runId?: string;
}

/**
 * Per store: the newest user message at which a compaction of each session last failed, so a failing
 * one is not tried again before `compact_every` more turns; and the sessions being compacted right now.
 */
const attempts = new WeakMap<Store, { tried: Map<number, number>; busy: Set<number> }>();

export function stateOf(store: Store) {
  const known = attempts.get(store);
  if (known) return known;
  const state = { tried: new Map<number, number>(), busy: new Set<number>() };
  attempts.set(store, state);
  return state;
}

/**
 * The prompt for the next model call: the system prompt with the session's running summary after it, then
 * the turns the summary does not cover, from where the session's window stood (see `planPrompt`). The
 * summary is never changed here: a compaction happens after a reply (see compact-idle.ts). Without
 * `moveWindow` (a turn whose images narrow the budget once), the session's window stays where it was.
 */
export function promptWithSummary(target: CompactionTarget, deps: CompactionDeps, input: PromptInput, moveWindow = true): ChatMessage[] {
  const marked = withMark(deps.store, target.sessionId, input);
  // An ephemeral session keeps nothing, a summary included.
  const plan =
    deps.config().context.summaries && !deps.store.history.isEphemeral(target.sessionId)
      ? planAfter(deps, marked, deps.store.summaries.latest(target.sessionId))
      : planPrompt(marked);
  if (moveWindow) keepMark(deps.store, target.sessionId, plan);
  return plan.messages;
}

/** The prompt around the session's stored summary, for another window: the session's window mark is read, not moved. */
export function promptWithStoredSummary(deps: CompactionDeps, sessionId: number, input: PromptInput): ChatMessage[] {
  const marked = withMark(deps.store, sessionId, input);
  if (!deps.config().context.summaries) return planPrompt(marked).messages;
  return planAfter(deps, marked, deps.store.summaries.latest(sessionId)).messages;
}

/** `/compact`: summarises every turn of the session but the newest one, now. */
export async function compactNow(target: CompactionTarget, deps: CompactionDeps): Promise<{ ok: boolean; message: string }> {
  if (stateOf(deps.store).busy.has(target.sessionId)) {
    return {
      ok: false,
      message: "a summary of this chat is being written right now (after the last reply); try /compact again when it is done",
    };
  }
  const summary = deps.store.summaries.latest(target.sessionId);
  const history = repairPairs(uncovered(deps, windowHistory(deps.store, target.sessionId), summary));
  const last = history.findLastIndex((m) => m.role === "user");
  if (last <= 0 || !history.slice(0, last).some((m) => m.role === "user")) {
    return { ok: false, message: "nothing to compact yet: the conversation has one turn or none since the last summary" };
  }
  const made = await compact(target, deps, history, last, summary);
  if (!made) return { ok: false, message: "the summary could not be made (see the log); nothing changed" };
  return { ok: true, message: `compacted ${made.turns} turn(s) into the summary (${made.summary.length} characters)` };
}

/** The summary as the model reads it, right after the system prompt. */
export function withSummary(system: string, summary: SummaryRow | undefined): string {
  if (!summary) return system;
  return `${system}\n\nSummary of the earlier conversation (its messages are no longer shown):\n${summary.summary}`;
}

export function planAfter(deps: CompactionDeps, input: PromptInput, summary: SummaryRow | undefined): PromptPlan {
  return planPrompt({ ...input, system: withSummary(input.system, summary), history: uncovered(deps, input.history, summary) });
}

/** The messages a summary does not cover yet: history comes in row order, so the first uncovered one is searched for. */
function uncovered(deps: CompactionDeps, history: ChatMessage[], summary: SummaryRow | undefined): ChatMessage[] {
  if (!summary) return history;
  const ids = deps.store.history;
  let lo = 0;
  let hi = history.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((ids.messageId(history[mid] as ChatMessage) ?? Number.POSITIVE_INFINITY) > summary.to_message_id) hi = mid;
    else lo = mid + 1;
  }
  return lo === 0 ? history : history.slice(lo);
}

/** The window of the endpoint serving now: what the server really has (read at start), or a fallback's. */
export function servingWindow(deps: CompactionDeps): PromptWindow {
  const model = deps.model();
  const cfg = deps.config().model;
  return model.window ?? { model: model.modelName, contextTokens: cfg.context_tokens, outputTokens: cfg.max_output_tokens };
}

/** How long a summary may grow: a sixth of the window, and within one answer of the model. */
export function summaryCapTokens(deps: CompactionDeps): number {
  const w = servingWindow(deps);
  return Math.max(64, Math.min(Math.floor((w.contextTokens - w.outputTokens) / 6), Math.floor(w.outputTokens * 0.8)));
}

/** Writes the new summary text (`part`: the messages it must newly cover); throws when it cannot. */
export type Summariser = (part: ChatMessage[], signal: AbortSignal) => Promise<string>;

/**
 * Summarises `history[first user message .. keptFrom)` into a new running summary and stores it. Returns
 * undefined (and logs why) when it could not: the window then drops those turns as without summaries.
 * `summarise` writes the text; by default a transcript is folded in, chunk by chunk, in requests of its own.
 */
export async function compact(
  target: CompactionTarget,
  deps: CompactionDeps,
  history: ChatMessage[],
  keptFrom: number,
  previous: SummaryRow | undefined,
  summarise: Summariser = (part, signal) => summariseInChunks(deps, target, part, previous?.summary, signal),
): Promise<SummaryRow | undefined> {
  const state = stateOf(deps.store);
  const ids = deps.store.history;
  const first = history.findIndex((m) => m.role === "user");
  const part = history.slice(first, keptFrom);
  const covered = part.map((m) => ids.messageId(m)).filter((id): id is number => id !== undefined);
  if (first < 0 || part.length === 0 || covered.length === 0 || state.busy.has(target.sessionId)) return undefined;
  const newest = history.findLast((m) => m.role === "user");
  const failed = () => state.tried.set(target.sessionId, (newest && ids.messageId(newest)) ?? Math.max(...covered));
  state.busy.add(target.sessionId);
  const timeoutS = deps.config().context.compact_timeout_s;
  const signal = AbortSignal.any([target.signal, AbortSignal.timeout(timeoutS * 1000)]);
  const started = performance.now();
  try {
    const text = await summarise(part, signal);
    const turns = part.filter((m) => m.role === "user").length + (previous?.turns ?? 0);
    const row = deps.store.summaries.add({
      session_id: target.sessionId,
      summary: text,
      from_message_id: previous?.from_message_id ?? Math.min(...covered),
      to_message_id: Math.max(...covered),
      turns,
    });
    const ms = Math.round(performance.now() - started);
    state.tried.delete(target.sessionId);
    deps.log?.info({ session: target.sessionKey, turns, chars: text.length, ms }, "compacted the oldest turns into the session's summary");
    return row;
  } catch (err) {
    const reason = signal.aborted && !target.signal.aborted ? `timed out after ${timeoutS} s` : (err as Error).message;
    failed();
    deps.log?.warn({ session: target.sessionKey, reason }, "compaction failed; the oldest turns are dropped instead");
    return undefined;
  } finally {
    state.busy.delete(target.sessionId);
  }
}

/** Folds the transcript into the summary one chunk at a time, so that every request fits the window. */
async function summariseInChunks(
  deps: CompactionDeps,
  target: CompactionTarget,
  part: ChatMessage[],
  previous: string | undefined,
  signal: AbortSignal,
): Promise<string> {
  const model = deps.model();
  const w = servingWindow(deps);
  const ratio = deps.calibration.ratio(w.model);
  const capTokens = summaryCapTokens(deps);
  const instructions = compactionInstructions(Math.floor(capTokens * 0.7));
  // The window minus the answer, the instructions, the summary so far (at most its cap) and framing.
  const room = Math.floor((w.contextTokens - w.outputTokens) / ratio) - estimateTokens(instructions) - capTokens - 64;
  const chunkChars = Math.floor(room * 3.6);
  if (chunkChars < 400) throw new Error(`the window (${w.contextTokens} tokens) is too small to summarise in`);
  let summary = previous;
  for (const chunk of chunkLines(transcriptLines(part, Math.min(MESSAGE_CHARS, chunkChars)), chunkChars)) {
    const messages: ChatMessage[] = [
      { role: "system", content: instructions },
      { role: "user", content: compactionBody(summary, chunk) },
    ];
    const send = model.prepare({ messages, tools: [], estimatedTokens: promptTokens(messages, []) });
    // A compaction is a model call like any other: it is in the usage ledger (and the run's budget).
    const onCall = (call: ModelCall) =>
      deps.store.usage.record(usageRow(call, { runId: target.runId ?? null, sessionId: target.sessionId, step: null }));
    const result = await deps.limiter.run((release) => send({ signal, onAnswered: release, onCall }));
    if (!result.ok) throw new Error(result.error.message);
    const text = result.text.trim();
    if (!text) throw new Error("the model sent an empty summary");
    summary = truncateLatin(text, Math.floor(capTokens * 3.6));
  }
  if (!summary) throw new Error("there was nothing to summarise");
  return summary;
}

function compactionInstructions(words: number): string {
  return `${COMPACTION_MARKER} between a user and their assistant, so the assistant can go on without the old messages.
Merge the summary so far with the new part of the conversation into one new summary.
Keep every fact, name, number, date, preference, decision, promise and open task; drop greetings and small talk.
For tool calls, say in a few words what was looked up or done and what came of it; never copy tool output.
Write short plain sentences or bullets, at most ${words} words. Answer with the summary only.`;
}

function compactionBody(summary: string | undefined, chunk: string): string {
  return `Summary so far:\n${summary ?? "(none yet)"}\n\nNew part of the conversation:\n${chunk}`;
}

/** One line per message, as a reader would want it: who said what, which tool ran and what it gave (shortened). */
function transcriptLines(messages: ChatMessage[], maxChars: number): string[] {
  const lines: string[] = [];
  for (const m of messages) {
    if (m.role === "user") lines.push(truncateLatin(`User: ${m.content}`, maxChars));
    else if (m.role === "tool") lines.push(truncateLatin(`Result of ${m.toolName}: ${summarize(m.content, RESULT_CHARS)}`, maxChars));
    else if (m.role === "assistant") {
      if (m.content.trim()) lines.push(truncateLatin(`Assistant: ${m.content}`, maxChars));
      for (const c of m.toolCalls ?? []) lines.push(truncateLatin(`Assistant called ${c.name} ${JSON.stringify(c.args ?? {})}`, maxChars));
    }
  }
  return lines;
}

/** Lines grouped into chunks of at most `maxChars` of Latin text (a line is never longer: see transcriptLines). */
function chunkLines(lines: string[], maxChars: number): string[] {
  const chunks: string[] = [];
  let current = "";
  let length = 0;
  for (const line of lines) {
    const size = latinLengthOf(line);
    if (current && length + size + 1 > maxChars) {
      chunks.push(current);
      current = "";
      length = 0;
    }
    length = current ? length + 1 + size : size;
    current = current ? `${current}\n${line}` : line;
  }
  if (current) chunks.push(current);
  return chunks;
}
