import type { ChatMessage, ToolSpec } from "../model/types.js";

/** A rough, deliberately pessimistic token estimate: ~4 characters a token plus per-message framing. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 3.6);
}

export function messageTokens(m: ChatMessage): number {
  const calls = m.role === "assistant" && m.toolCalls ? JSON.stringify(m.toolCalls).length : 0;
  return estimateTokens(m.content) + Math.ceil(calls / 3.6) + 6;
}

export interface PromptInput {
  system: string;
  tools: ToolSpec[];
  /** Session history, oldest first; the last user message is the current one. */
  history: ChatMessage[];
  /** Goes at the end of the last user message, so the prefix stays byte-stable for the model's cache. */
  timeNote: string;
  /** context_tokens minus max_output_tokens. */
  budgetTokens: number;
}

const NO_RESULT = "no result: the run ended before this call was answered.";

/**
 * System prompt, then as much recent history as fits. Turns (a user message and everything after it)
 * are dropped oldest first, so a tool call is never separated from its result.
 */
export function buildPrompt(input: PromptInput): ChatMessage[] {
  const fixed = estimateTokens(input.system) + estimateTokens(JSON.stringify(input.tools)) + estimateTokens(input.timeNote) + 10;
  const turns = splitTurns(repairPairs(input.history));
  let room = input.budgetTokens - fixed;
  const kept: ChatMessage[][] = [];
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i] as ChatMessage[];
    const cost = turn.reduce((sum, m) => sum + messageTokens(m), 0);
    if (cost > room && kept.length > 0) break;
    kept.unshift(turn);
    room -= cost;
  }
  const messages = kept.flat();
  return [{ role: "system", content: input.system }, ...withTimeNote(messages, input.timeNote)];
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

function withTimeNote(messages: ChatMessage[], note: string): ChatMessage[] {
  if (!note) return messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as ChatMessage;
    if (m.role === "user") {
      const copy = messages.slice();
      copy[i] = { role: "user", content: `${m.content}\n\n(${note})` };
      return copy;
    }
  }
  return messages;
}

export const DEFAULT_SYSTEM_PROMPT = `You are hermes, a personal assistant running on the owner's home server.
Be brief and exact. Use a tool when it gives a better answer than guessing; never invent tool results.
If a tool fails, is blocked or is denied, say so plainly and do not call it again with the same arguments.
Answer in the language the owner writes in.`;
