import { estimateTokens, fitLatin, latinLength, messageTokens, toolTokens, truncateLatin } from "../model/tokens.js";
import type { ChatMessage, ToolSpec } from "../model/types.js";
import { cutAround } from "../text.js";
import { cutArgs, cutCalls } from "./cut-calls.js";

/**
 * Where a jump or a compaction leaves the prompt: 40 % of the budget. Lower keeps fewer old turns; higher
 * jumps more often, and each jump re-reads what it kept (at 4k, summaries off, 60 turns: 12.3 % of prompt
 * text new at one half, 11.8 % at 40 %).
 */
export const JUMP_TO = 0.4;

export interface PromptInput {
  system: string;
  tools: ToolSpec[];
  /** Session history, oldest first; the last user message is the current one. */
  history: ChatMessage[];
  /** context_tokens minus max_output_tokens. */
  budgetTokens: number;
  /** Real tokens per estimated token for this model (1 until calibrated). */
  ratio?: number;
  /** Where the previous request's window started, and the store's ids of the history's messages. */
  mark?: WindowMark;
  idOf?: (m: ChatMessage) => number | undefined;
  /** Keep the window where it stands even when it no longer fits (`over` says so): the prompt a compaction extends. */
  noJump?: boolean;
}

/**
 * Where the window's last jump left the history, by message id: the first message kept, and the first
 * whose tool result is still whole (older ones were shortened at that jump).
 */
export interface WindowMark {
  fromId: number;
  wholeFromId: number;
}

/** Old tool results longer than this are shortened, at a jump, before any turn is dropped. */
export const OLD_RESULT_CHARS = 600;
const NO_RESULT = "no result: the run ended before this call was answered.";

/**
 * System prompt, then the history from where the last jump left it, as long as that fits. When it does
 * not, the window jumps: every old tool result is shortened and the oldest turns (a user message and
 * everything after it) are dropped at once, down to 40 % of the budget, so the turns after it append to a
 * prefix the model server still holds. A tool call is never separated from its result; the current turn
 * is always kept, and a user message too large on its own is cut.
 */
export function buildPrompt(input: PromptInput): ChatMessage[] {
  return planPrompt(input).messages;
}

/** A built prompt, and which turns of the (repaired) history it had to leave out. */
export interface PromptPlan {
  messages: ChatMessage[];
  /** The history the prompt was built from, with every call paired with its result. */
  history: ChatMessage[];
  /** Index in `history` of the first message the prompt carries; everything before it was dropped. */
  keptFrom: number;
  /** Whole turns (a user message and what followed) left out. */
  droppedTurns: number;
  /** The history did not fit from where the window stood: it jumped. */
  over: boolean;
  /** The window this prompt was built with, for the next request (absent when messages have no ids). */
  mark?: WindowMark;
}

/** The history of a prompt, split into turns: what planning a window needs. */
interface Turned {
  messages: ChatMessage[];
  /** Index of each user message (the start of each turn). */
  starts: number[];
  cost: (m: ChatMessage) => number;
  /** Tokens of the system prompt, tool signatures and framing. */
  fixed: number;
}

function turned(input: PromptInput): Turned {
  const ratio = input.ratio ?? 1;
  const messages = repairPairs(input.history);
  const starts: number[] = [];
  for (let i = 0; i < messages.length; i++) if (messages[i]?.role === "user") starts.push(i);
  return {
    messages,
    starts,
    cost: (m) => Math.ceil(messageTokens(m) * ratio),
    fixed: Math.ceil((estimateTokens(input.system) + 6 + toolTokens(input.tools) + 16) * ratio),
  };
}

const sum = (t: Turned, messages: ChatMessage[], from: number, to = messages.length) => {
  let total = 0;
  for (let i = from; i < to; i++) total += t.cost(messages[i] as ChatMessage);
  return total;
};

/**
 * Index of the first turn a jump keeps: the newest turns whose cost (old results and calls shortened) stays within
 * `keepTokens` for the whole prompt; the current turn always, unless `keepCurrent` is false and it does not
 * fit either (then nothing is kept: the index is the history's length).
 */
export function jumpFrom(input: PromptInput, keepTokens: number, keepCurrent = true): { history: ChatMessage[]; from: number } {
  const t = turned(input);
  const current = t.starts.at(-1);
  if (current === undefined) return { history: t.messages, from: t.messages.length };
  const shortened = t.messages.map((m, i) => (i < current ? shortenOld(m) : m));
  let from = current;
  let left = keepTokens - t.fixed - sum(t, shortened, current);
  if (left < 0 && !keepCurrent) return { history: t.messages, from: t.messages.length };
  for (let k = t.starts.length - 2; k >= 0; k--) {
    const size = sum(t, shortened, t.starts[k] as number, from);
    if (size > left) break;
    left -= size;
    from = t.starts[k] as number;
  }
  return { history: t.messages, from };
}

/** `buildPrompt`, also saying what it left out (what a compaction would summarise) and where the window stands. */
export function planPrompt(input: PromptInput): PromptPlan {
  const t = turned(input);
  const { messages, starts } = t;
  const system: ChatMessage = { role: "system", content: input.system };
  const current = starts.at(-1);
  if (current === undefined) return { messages: [system], history: messages, keptFrom: messages.length, droppedTurns: 0, over: false };
  const room = input.budgetTokens - t.fixed;
  const dropped = (index: number) => starts.filter((start) => start < index).length;
  const markOf = (from: number, whole: number): WindowMark | undefined => {
    const fromId = input.idOf?.(messages[from] as ChatMessage);
    const wholeFromId = input.idOf?.(messages[whole] as ChatMessage) ?? fromId;
    return fromId === undefined || wholeFromId === undefined ? undefined : { fromId, wholeFromId };
  };
  // Where the previous request's window stood: the history appends to it while it fits.
  const at = (id: number) => {
    const i = messages.findIndex((m) => (input.idOf?.(m) ?? Number.NEGATIVE_INFINITY) >= id);
    return i < 0 ? messages.length : i;
  };
  let from = starts[0] as number;
  let whole = from;
  if (input.mark && input.idOf) {
    from = starts.find((s) => s >= at(input.mark?.fromId as number)) ?? current;
    whole = Math.max(from, at(input.mark.wholeFromId));
  }
  const window = messages.slice(from).map((m, i) => (from + i < whole ? shortenOld(m) : m));
  const fits = sum(t, window, 0) <= room;
  if (fits || input.noJump) {
    return {
      messages: [system, ...window],
      history: messages,
      keptFrom: from,
      droppedTurns: dropped(from),
      over: !fits,
      mark: markOf(from, whole),
    };
  }
  // A jump: every old result shortened and the oldest turns dropped at once, well under the budget.
  const jump = jumpFrom(input, Math.floor(input.budgetTokens * JUMP_TO)).from;
  const kept = messages.slice(jump).map((m, i) => (jump + i < current ? shortenOld(m) : m));
  if (sum(t, kept, 0) > room) {
    const turn = fitCurrentTurn(messages.slice(current), room, input.ratio ?? 1);
    return {
      messages: [system, ...turn],
      history: messages,
      keptFrom: current,
      droppedTurns: dropped(current),
      over: true,
      mark: markOf(current, current),
    };
  }
  return {
    messages: [system, ...kept],
    history: messages,
    keptFrom: jump,
    droppedTurns: dropped(jump),
    over: true,
    mark: markOf(jump, current),
  };
}

function shortenOldResult(m: ChatMessage): ChatMessage {
  if (m.role !== "tool" || latinLength(m) <= OLD_RESULT_CHARS) return m;
  return { ...m, content: truncateLatin(m.content, OLD_RESULT_CHARS) };
}

/**
 * An old message as a jump keeps it: a tool result at OLD_RESULT_CHARS, and so a call's long argument (a
 * `write_file` of a long text), which would otherwise have the whole turn, and every older one, left out.
 * The assistant's own text stays whole.
 */
function shortenOld(m: ChatMessage): ChatMessage {
  if (m.role === "tool") return shortenOldResult(m);
  if (m.role !== "assistant" || !m.toolCalls?.length) return m;
  let old = oldCalls.get(m);
  if (old === undefined) {
    old = cutArgs(m, OLD_RESULT_CHARS);
    oldCalls.set(m, old);
  }
  return old;
}
const oldCalls = new WeakMap<ChatMessage, ChatMessage>();

/** Tool results of a turn that does not fit even with every result shortened are not cut below this. */
const MIN_RESULT_CHARS = 100;
/** Nor is the user message. */
const MIN_MESSAGE_CHARS = 200;

/**
 * The current turn alone is over budget. When its tool results, shortened evenly to what the room holds,
 * keep at least what an old result keeps, that is all. Else, as if shortened as old ones are (shortenOld:
 * results and the calls' long arguments at an old result's length): the message takes at most half the room, the run's
 * oldest steps (a call with its results) are left out, the newest kept, and the message says how many.
 * Then the kept steps' calls, when they crowd the results, are cut to half the room at most and to what
 * leaves each result an old result's length (cutCalls); the results are shortened evenly to the room (from
 * their whole text); last, the message is cut to what is left, and the calls, if the turn is still over.
 */
function fitCurrentTurn(turn: ChatMessage[], room: number, ratio: number): ChatMessage[] {
  const cost = (messages: ChatMessage[]) => messages.reduce((sum, m) => sum + Math.ceil(messageTokens(m) * ratio), 0);
  if (cost(turn) <= room) return turn;
  const [first, ...after] = turn as [ChatMessage, ...ChatMessage[]];
  let message = first;
  let steps = stepsOf(after);
  if (evenShare(steps, room - cost([message]), ratio) < OLD_RESULT_CHARS) {
    // Each step's cost as if shortened as old ones are, counted once.
    const capped = steps.map((step) => cost(step.map(shortenOld)));
    let from = 0;
    const over = () => cost([message]) + capped.slice(from).reduce((a, b) => a + b, 0) > room;
    if (over() && steps.length > 0) message = cutMessage(message, Math.floor(room / 2), ratio);
    while (over() && from < steps.length - 1) from++;
    if (from > 0 && message.role === "user") {
      message = {
        ...message,
        content: `${message.content}\n[… ${from} earlier step(s) of this run were left out to fit the model's context …]`,
      };
    }
    steps = steps.slice(from);
    // The calls a model wrote (a write_file of a long text) crowd out the results, which are new to it: the
    // calls keep what leaves each result an old result's length, and at most half the room.
    const calls = (messages: ChatMessage[]) => messages.filter((m) => m.role === "assistant");
    const results = steps.flat().filter((m) => m.role === "tool");
    const resultsFloor = cost(results.map(shortenOldResult));
    const callsRoom = Math.min(Math.floor(room / 2), room - cost([message]) - resultsFloor);
    // Only their long strings: a URL or a path is short and says what each result is; arguments are left out
    // only at the end, if the turn is still over the room.
    if (cost(calls(steps.flat())) > callsRoom) {
      steps = stepsOf(cutCalls(steps.flat(), (cut) => cost(calls(cut)) <= callsRoom, OLD_RESULT_CHARS / 2, false));
    }
  }
  const unshortened = steps;
  steps = shortenResults(unshortened, room - cost([message]), ratio);
  // Many parallel results can pass the room even at MIN_RESULT_CHARS each: then they keep less, down to the marker.
  if (cost([message, ...steps.flat()]) > room) steps = shortenResults(unshortened, room - cost([message]), ratio, 0);
  if (cost([message, ...steps.flat()]) > room) message = cutMessage(message, room - cost(steps.flat()), ratio);
  const fitted = [message, ...steps.flat()];
  return cost(fitted) > room ? cutCalls(fitted, (cut) => cost(cut) <= room) : fitted;
}

/** A turn's messages after its user message, as steps: an assistant message and the results that follow it. */
function stepsOf(messages: ChatMessage[]): ChatMessage[][] {
  const steps: ChatMessage[][] = [];
  for (const m of messages) {
    const step = steps.at(-1);
    if (m.role === "tool" && step) step.push(m);
    else steps.push([m]);
  }
  return steps;
}

/**
 * How many characters (of Latin text: see latinLength) each tool result of `steps` may keep for the steps to take about `tokens`: results
 * shorter than an even share keep their whole text, and what they leave goes to the longer ones.
 * Infinite when every result fits whole.
 */
function evenShare(steps: ChatMessage[][], tokens: number, ratio: number): number {
  const messages = steps.flat();
  const results = messages.filter((m) => m.role === "tool").sort((a, b) => latinLength(a) - latinLength(b));
  let left = tokens - messages.reduce((sum, m) => sum + (m.role === "tool" ? 0 : Math.ceil(messageTokens(m) * ratio)), 0);
  for (let i = 0; i < results.length; i++) {
    const share = charsWithin(Math.floor(left / (results.length - i)), ratio);
    const result = results[i] as ChatMessage;
    if (latinLength(result) > share) return share;
    left -= Math.ceil(messageTokens(result) * ratio);
  }
  return Number.POSITIVE_INFINITY;
}

/** Every tool result of `steps` shortened evenly, so that the steps take about `tokens` (not below `floor` characters). */
function shortenResults(steps: ChatMessage[][], tokens: number, ratio: number, floor = MIN_RESULT_CHARS): ChatMessage[][] {
  const each = Math.max(floor, evenShare(steps, tokens, ratio));
  if (!Number.isFinite(each)) return steps;
  return steps.map((step) =>
    step.map((m) => (m.role === "tool" && latinLength(m) > each ? { ...m, content: truncateLatin(m.content, each) } : m)),
  );
}

/** The user message cut in the middle so that it costs at most `tokens` (not below MIN_MESSAGE_CHARS). */
function cutMessage(message: ChatMessage, tokens: number, ratio: number): ChatMessage {
  const maxChars = Math.max(MIN_MESSAGE_CHARS, charsWithin(tokens, ratio));
  if (message.role !== "user" || latinLength(message) <= maxChars) return message;
  // In characters of this text: fewer than of Latin text when its script costs more tokens a character.
  const text = message.content;
  const marker = (left: number) => `\n[… ${left} characters of this message were cut to fit the model's context …]\n`;
  return { ...message, content: fitLatin(text, maxChars, (keep) => cutAround(text, keep, marker, 0.8), MIN_MESSAGE_CHARS) };
}

/** The most characters a message may have to cost at most `tokens` at `ratio`, the estimate's rounding included. */
function charsWithin(tokens: number, ratio: number): number {
  return Math.max(0, Math.floor((tokens / ratio - 7) * 3.6));
}

/**
 * Every assistant tool call gets exactly one result, in call order, right after it: results that arrived
 * across a suspension are moved back into place, orphans are dropped, missing ones get a placeholder.
 */
export function repairPairs(history: ChatMessage[]): ChatMessage[] {
  if (wellPaired(history)) return history;
  const results = new Map<string, ChatMessage>();
  for (const m of history) if (m.role === "tool") results.set(m.toolCallId, m);
  const out: ChatMessage[] = [];
  for (const m of history) {
    if (m.role === "tool") continue;
    out.push(m);
    if (m.role !== "assistant" || !m.toolCalls) continue;
    for (const call of m.toolCalls) {
      out.push(results.get(call.id) ?? { role: "tool", content: NO_RESULT, toolCallId: call.id, toolName: call.name });
    }
  }
  return out;
}

/** True when every call's result already follows it, in order, and no result stands anywhere else (the usual case). */
function wellPaired(history: ChatMessage[]): boolean {
  for (let i = 0; i < history.length; i++) {
    const m = history[i] as ChatMessage;
    if (m.role === "tool") return false;
    if (m.role !== "assistant" || !m.toolCalls) continue;
    for (const call of m.toolCalls) {
      const next = history[++i];
      if (next?.role !== "tool" || next.toolCallId !== call.id) return false;
    }
  }
  return true;
}

/** Learns real tokens per estimated token from the prompt sizes the endpoint reports. */
export class TokenCalibration {
  private readonly ratios = new Map<string, number>();

  constructor(private readonly persist?: { load(model: string): number | undefined; save(model: string, ratio: number): void }) {}

  ratio(model: string): number {
    let r = this.ratios.get(model);
    if (r === undefined) {
      const stored = this.persist?.load(model);
      r = usableRatio(stored) ? stored : 1;
      this.ratios.set(model, r);
    }
    return r;
  }

  /**
   * Feeds one observation: the estimate we made and the prompt tokens the model reported. Only a finite,
   * positive ratio is kept, so one odd report cannot spoil the prompts of every later run.
   */
  observe(model: string, estimated: number, reported: number | undefined): void {
    if (reported === undefined || !(reported > 0 && estimated > 0)) return;
    // A prompt served partly from the model's cache may report only the uncached part: ignore those.
    if (reported < estimated * 0.5) return;
    const sample = Math.min(3, reported / estimated);
    const next = this.ratio(model) * 0.7 + sample * 0.3;
    if (!usableRatio(next)) return;
    this.ratios.set(model, next);
    this.persist?.save(model, next);
  }
}

function usableRatio(r: unknown): r is number {
  return typeof r === "number" && Number.isFinite(r) && r > 0;
}

export const DEFAULT_SYSTEM_PROMPT = `You are hermes, a personal assistant running on the owner's home server.
Be brief and exact. Use a tool when it gives a better answer than guessing; never invent tool results.
If a tool fails, is blocked or is denied, say so plainly and do not call it again with the same arguments.
Answer in the language the owner writes in.`;
