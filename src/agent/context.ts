import type { ChatMessage, ToolSpec } from "../model/types.js";
import { truncateResult } from "../text.js";

/** A deliberately pessimistic token estimate (~3.6 characters a token); calibrated per model by `ratio`. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 3.6);
}

const tokenCache = new WeakMap<object, number>();

export function messageTokens(m: ChatMessage): number {
  let tokens = tokenCache.get(m);
  if (tokens === undefined) {
    const calls = m.role === "assistant" && m.toolCalls ? JSON.stringify(m.toolCalls).length : 0;
    tokens = estimateTokens(m.content) + Math.ceil(calls / 3.6) + 6;
    tokenCache.set(m, tokens);
  }
  return tokens;
}

/** Estimated tokens of a whole request: messages plus tool signatures. */
export function promptTokens(messages: ChatMessage[], tools: ToolSpec[]): number {
  return messages.reduce((sum, m) => sum + messageTokens(m), 0) + toolTokens(tools);
}

/** Tool signatures as the API carries them (`{"type":"function","function":…}`). */
export function toolTokens(tools: ToolSpec[]): number {
  let tokens = tokenCache.get(tools);
  if (tokens === undefined) {
    tokens = tools.length ? estimateTokens(JSON.stringify(tools.map((t) => ({ type: "function", function: t })))) : 0;
    tokenCache.set(tools, tokens);
  }
  return tokens;
}

export interface PromptInput {
  system: string;
  tools: ToolSpec[];
  /** Session history, oldest first; the last user message is the current one. */
  history: ChatMessage[];
  /** context_tokens minus max_output_tokens. */
  budgetTokens: number;
  /** Real tokens per estimated token for this model (1 until calibrated). */
  ratio?: number;
}

/** Old tool results longer than this are shortened before any turn is dropped. */
export const OLD_RESULT_CHARS = 600;
const NO_RESULT = "no result: the run ended before this call was answered.";

/**
 * System prompt, then as much recent history as fits: old tool results are shortened first, then turns
 * (a user message and everything after it) are dropped oldest first, so a tool call is never separated
 * from its result. The current turn is always kept; a user message too large on its own is cut.
 */
export function buildPrompt(input: PromptInput): ChatMessage[] {
  const ratio = input.ratio ?? 1;
  const cost = (m: ChatMessage) => Math.ceil(messageTokens(m) * ratio);
  const fixed = Math.ceil((estimateTokens(input.system) + 6 + toolTokens(input.tools) + 16) * ratio);
  let turns = splitTurns(repairPairs(input.history));
  const room = input.budgetTokens - fixed;
  const total = (ts: ChatMessage[][]) => ts.reduce((sum, t) => sum + t.reduce((s, m) => s + cost(m), 0), 0);
  if (total(turns) > room) turns = turns.map((t, i) => (i === turns.length - 1 ? t : t.map(shortenOldResult)));
  const kept: ChatMessage[][] = [];
  let left = room;
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i] as ChatMessage[];
    const size = turn.reduce((sum, m) => sum + cost(m), 0);
    if (size > left && kept.length > 0) break;
    kept.unshift(turn);
    left -= size;
  }
  const current = kept[kept.length - 1];
  if (current && left < 0) kept[kept.length - 1] = fitCurrentTurn(current, room, ratio);
  return [{ role: "system", content: input.system }, ...kept.flat()];
}

function shortenOldResult(m: ChatMessage): ChatMessage {
  if (m.role !== "tool" || m.content.length <= OLD_RESULT_CHARS) return m;
  return { ...m, content: truncateResult(m.content, OLD_RESULT_CHARS) };
}

/** The current turn alone is over budget: shorten its tool results, then cut the user message itself. */
function fitCurrentTurn(turn: ChatMessage[], room: number, ratio: number): ChatMessage[] {
  const shortened = turn.map(shortenOldResult);
  const others = shortened.slice(1).reduce((sum, m) => sum + Math.ceil(messageTokens(m) * ratio), 0);
  const first = shortened[0] as ChatMessage;
  const maxChars = Math.max(200, Math.floor(((room - others) / ratio - 6) * 3.6));
  if (first.role !== "user" || first.content.length <= maxChars) return shortened;
  const cut = first.content.length - maxChars;
  const marker = `\n[… ${cut} characters of this message were cut to fit the model's context …]\n`;
  const head = Math.floor((maxChars - marker.length) * 0.8);
  const tail = Math.max(0, maxChars - marker.length - head);
  return [
    { role: "user", content: first.content.slice(0, head) + marker + first.content.slice(first.content.length - tail) },
    ...shortened.slice(1),
  ];
}

function splitTurns(history: ChatMessage[]): ChatMessage[][] {
  const turns: ChatMessage[][] = [];
  for (const m of history) {
    const last = turns.at(-1);
    if (m.role === "user" || !last) turns.push([m]);
    else last.push(m);
  }
  if (turns[0]?.[0]?.role !== "user") turns.shift();
  return turns;
}

/**
 * Every assistant tool call gets exactly one result, in call order, right after it: results that arrived
 * across a suspension are moved back into place, orphans are dropped, missing ones get a placeholder.
 */
export function repairPairs(history: ChatMessage[]): ChatMessage[] {
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

/** Learns real tokens per estimated token from the prompt sizes the endpoint reports. */
export class TokenCalibration {
  private readonly ratios = new Map<string, number>();

  constructor(private readonly persist?: { load(model: string): number | undefined; save(model: string, ratio: number): void }) {}

  ratio(model: string): number {
    let r = this.ratios.get(model);
    if (r === undefined) {
      r = this.persist?.load(model) ?? 1;
      this.ratios.set(model, r);
    }
    return r;
  }

  /** Feeds one observation: the estimate we made and the prompt tokens the model reported. */
  observe(model: string, estimated: number, reported: number | undefined): void {
    if (!reported || estimated <= 0) return;
    // A prompt served partly from the model's cache may report only the uncached part: ignore those.
    if (reported < estimated * 0.5) return;
    const sample = Math.min(3, reported / estimated);
    const next = this.ratio(model) * 0.7 + sample * 0.3;
    this.ratios.set(model, next);
    this.persist?.save(model, next);
  }
}

export const DEFAULT_SYSTEM_PROMPT = `You are hermes, a personal assistant running on the owner's home server.
Be brief and exact. Use a tool when it gives a better answer than guessing; never invent tool results.
If a tool fails, is blocked or is denied, say so plainly and do not call it again with the same arguments.
Answer in the language the owner writes in.`;
