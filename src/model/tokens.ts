import type { ChatMessage, ToolSpec } from "./types.js";

/**
 * A token count as an endpoint reported it, if it is one: a whole number, zero or more. Anything else
 * (a string, NaN, a negative or fractional number) is taken as not reported, so it never reaches the
 * usage ledger, the daily budgets or the calibration.
 */
export function reportedTokens(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

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
  // No entry for a list without tools: callers pass a fresh `[]`, once per message of a history.
  if (tools.length === 0) return 0;
  let tokens = tokenCache.get(tools);
  if (tokens === undefined) {
    tokens = estimateTokens(JSON.stringify(tools.map((t) => ({ type: "function", function: t }))));
    tokenCache.set(tools, tokens);
  }
  return tokens;
}
