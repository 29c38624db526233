import { latinLengthOf, messageTokens, promptTokens, truncateLatin } from "../model/tokens.js";
import type { ChatMessage, ModelCall, ToolSpec } from "../model/types.js";
import { usageRow } from "../store/usage.js";
import {
  COMPACTION_MARKER,
  type CompactionDeps,
  type CompactionTarget,
  compact,
  planAfter,
  servingWindow,
  stateOf,
  summaryCapTokens,
} from "./compaction.js";
import { JUMP_TO, jumpFrom, type PromptInput } from "./context.js";
import { withMark } from "./window.js";

/**
 * After a reply has gone out: when the next turn, if as large as this one, would no longer fit, the turns
 * before the newest ones are folded into the running summary now, in idle time, so that the next request
 * starts with the new summary in place and then only appends until the budget needs the next one. The
 * prompt drops to 40 % of the budget: every turn the summary leaves no room for is folded in, the one just
 * answered too when it does not fit (as at 4k with the default tools). The summary grows at its end (an
 * addition after the same bytes, which the server still holds) until the next addition would pass its cap;
 * then it is rewritten whole, to half the cap. The summary request is the chat's own prompt with one more
 * message asking for the summary: a model server with a prefix cache reads only that message (any other
 * request would evict the chat's cache on a one-slot server). When that request would not fit the window,
 * the transcript is summarised in requests of their own instead. A failure changes nothing and is tried
 * again `compact_every` turns later.
 */
export async function compactAfterReply(target: CompactionTarget, deps: CompactionDeps, input: PromptInput): Promise<void> {
  const cfg = deps.config();
  // An ephemeral session (an API request without a session) keeps nothing, a summary included.
  if (!cfg.context.summaries || deps.store.history.isEphemeral(target.sessionId)) return;
  const previous = deps.store.summaries.latest(target.sessionId);
  const plan = planAfter(deps, { ...withMark(deps.store, target.sessionId, input), noJump: true }, previous);
  const ratio = input.ratio ?? 1;
  const last = plan.history.findLastIndex((m) => m.role === "user");
  if (last < 0 || !retryDue(deps, target.sessionId, plan.history)) return;
  // Turns the window dropped (a turn larger than foreseen) are caught up with in requests of their own.
  if (plan.droppedTurns > 0) return void (await compact(target, deps, plan.history, plan.keptFrom, previous));
  // The next turn, as large as the largest in the window or half again this one, and the framing the window counts.
  const next = (Math.max(largestTurn(plan.history, plan.keptFrom), promptTokens(plan.history.slice(last), []) * 1.5) + 16) * ratio;
  if (!plan.over && promptTokens(plan.messages, input.tools) * ratio + next <= input.budgetTokens) return;
  const capTokens = summaryCapTokens(deps);
  // The prompt drops to 40 % of the budget, as at a jump: the new summary (at its longest) and the newest
  // turns that fit beside it, verbatim; when not even the turn just answered fits, every turn is summarised.
  const keepTokens = Math.floor(input.budgetTokens * JUMP_TO) - Math.ceil(capTokens * ratio);
  const { from } = jumpFrom({ ...input, history: plan.history }, keepTokens, false);
  if (!plan.history.slice(0, from).some((m) => m.role === "user")) return;
  const capChars = Math.floor(capTokens * 3.6);
  // The summary grows at its end while an addition fits under its cap (the text before stays the same
  // bytes, so the server keeps it); when it would not, the whole is rewritten to half the cap.
  // In characters of Latin text (see latinLength): a summary in another script holds fewer of its own.
  const adds = previous !== undefined && latinLengthOf(previous.summary) + Math.floor(capChars * ADDITION_SHARE) + 1 <= capChars;
  const ask =
    (adds ? additionInstructions(wordsFor(capTokens * ADDITION_SHARE)) : idleInstructions(wordsFor(capTokens * REWRITE_SHARE))) +
    coveredUntil(plan.history[from]);
  const request = [...plan.messages, { role: "user" as const, content: ask }];
  const served = servingWindow(deps);
  const window = Math.min(served.contextTokens, input.budgetTokens + served.outputTokens);
  const fits = (promptTokens(request, input.tools) + capTokens) * ratio <= window;
  const inPlace = async (signal: AbortSignal) => {
    // The cap in the model's own tokens (the estimate times its calibration), as `fits` counted it.
    const text = await summariseInPlace(deps, target, request, input.tools, Math.max(1, Math.floor(capTokens * ratio)), signal);
    if (!adds || !previous) return truncateLatin(text, capChars);
    return `${previous.summary}\n${truncateLatin(text, capChars - latinLengthOf(previous.summary) - 1)}`;
  };
  await compact(target, deps, plan.history, from, previous, fits ? (_, signal) => inPlace(signal) : undefined);
}

/**
 * Where the summary stops when the newest turns stay in the chat word for word (the summary covers only
 * the turns before them): said by the first words of the first turn kept, which the model sees above.
 */
function coveredUntil(kept: ChatMessage | undefined): string {
  if (!kept) return "";
  const start = (kept.content.split("\n")[0] ?? "").slice(0, SNIPPET_CHARS);
  return `\n${SUMMARY_STOPS} ${JSON.stringify(start)}: that message and the ones after it stay in the chat word for word.`;
}

/** The words that say where a summary stops (the fake model in the tests knows them too). */
export const SUMMARY_STOPS = "Cover only the conversation before the user message that begins";
const SNIPPET_CHARS = 80;

/** A rewritten summary is asked for in half its cap, an addition in a quarter: an addition or two, then a rewrite. */
const REWRITE_SHARE = 0.5;
const ADDITION_SHARE = 0.25;
const wordsFor = (tokens: number) => Math.floor(tokens * 0.7);

/** Estimated tokens of the largest turn from `from` on. */
function largestTurn(history: ChatMessage[], from: number): number {
  let largest = 0;
  let size = 0;
  for (let i = from; i < history.length; i++) {
    const m = history[i] as ChatMessage;
    if (m.role === "user") size = 0;
    size += messageTokens(m);
    largest = Math.max(largest, size);
  }
  return largest;
}

/** True unless a compaction of the session failed less than `compact_every` user turns ago. */
function retryDue(deps: CompactionDeps, sessionId: number, history: ChatMessage[]): boolean {
  const failedAt = stateOf(deps.store).tried.get(sessionId);
  if (failedAt === undefined) return true;
  let turns = 0;
  for (const m of history) if (m.role === "user" && (deps.store.history.messageId(m) ?? 0) > failedAt) turns++;
  return turns >= deps.config().context.compact_every;
}

/** The chat's prompt, the tools included (they are part of the prefix the server holds), asking for the summary. */
async function summariseInPlace(
  deps: CompactionDeps,
  target: CompactionTarget,
  messages: ChatMessage[],
  tools: ToolSpec[],
  capTokens: number,
  signal: AbortSignal,
): Promise<string> {
  // The answer is the summary, at most its cap: asked for as such, prompt and answer fit the window that
  // `fits` checked (a whole answer's max_output_tokens after a full chat's prompt would not, and a strict
  // server such as vLLM refuses a request whose prompt and max_tokens pass its context).
  const send = deps.model().prepare({ messages, tools, estimatedTokens: promptTokens(messages, tools), maxOutputTokens: capTokens });
  const onCall = (call: ModelCall) =>
    deps.store.usage.record(usageRow(call, { runId: target.runId ?? null, sessionId: target.sessionId, step: null }));
  const result = await deps.limiter.run((release) => send({ signal, onAnswered: release, onCall }));
  if (!result.ok) throw new Error(result.error.message);
  if (result.toolCalls.length) throw new Error("the model called a tool instead of writing the summary");
  const text = result.text.trim();
  if (!text) throw new Error("the model sent an empty summary");
  return text;
}

function idleInstructions(words: number): string {
  return `${COMPACTION_MARKER} so far, for the assistant to go on without its older messages. Not a message from the user: do not answer it, call no tool.
Merge the summary above (if any) with the conversation. Keep every fact, name, number, date, preference, decision, promise and open task; for a tool call, what was done and what came of it, never its output.
At most ${words} words, plain sentences or bullets; answer with the summary only.`;
}

/** The words that tell an addition request from a rewrite (the fake model in the tests knows them too). */
export const SUMMARY_ADDITION = "The summary above stays as it is";

function additionInstructions(words: number): string {
  return `${COMPACTION_MARKER} so far, for the assistant to go on without its older messages. Not a message from the user: do not answer it, call no tool.
${SUMMARY_ADDITION}: write only what to add to it from the conversation after it. Keep every fact, name, number, date, preference, decision, promise and open task; for a tool call, what was done and what came of it, never its output.
At most ${words} words, plain sentences or bullets; answer with the addition only.`;
}
