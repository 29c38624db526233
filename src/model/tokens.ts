import type { ChatMessage, ToolSpec } from "./types.js";

/**
 * A token count as an endpoint reported it, if it is one: a whole number, zero or more. Anything else
 * (a string, NaN, a negative or fractional number) is taken as not reported, so it never reaches the
 * usage ledger, the daily budgets or the calibration.
 */
export function reportedTokens(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * A deliberately pessimistic token estimate, calibrated per model by `ratio`. Latin script runs ~3.6
 * characters a token; other scripts far fewer, so they are counted apart: a Chinese, Japanese or Korean
 * character 1.25 tokens (tokenizers give them 0.7–1.3), a character beyond the first 65,536 (an emoji, a
 * rare ideograph) 2, and one of the other alphabets, Indic scripts and symbols in between half a token
 * (general punctuation, as in the cut markers, counts as Latin).
 * Counted at 3.6 a token, CJK text was under-estimated 3–5 times, and a long chat in it went far over
 * `context_tokens` (Ollama then drops the front of the prompt: the system prompt and the tools).
 */
export function estimateTokens(text: string): number {
  return Math.ceil(tokenWeight(text));
}

const LATIN_TOKEN_CHARS = 3.6;
/** Any character past Latin and general punctuation (dashes, quotes, the ellipsis): the text needs counting by script. */
const NON_LATIN = /[^\u0000-\u036f\u2000-\u206f]/;
const DENSE = /[\u1100-\u11ff\u2e80-\ua4cf\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]/g;
const ASTRAL = /[\ud800-\udbff]/g;
const BETWEEN = /[\u0370-\u10ff\u1200-\u1fff\u2070-\u2e7f\ua4d0-\ua95f\ua980-\uabff\ufb00-\ufe2f\ufe50-\ufeff]/g;

function tokenWeight(text: string): number {
  if (!NON_LATIN.test(text)) return text.length / LATIN_TOKEN_CHARS;
  const dense = text.match(DENSE)?.length ?? 0;
  const astral = text.match(ASTRAL)?.length ?? 0;
  const between = text.match(BETWEEN)?.length ?? 0;
  const latin = text.length - dense - 2 * astral - between;
  return latin / LATIN_TOKEN_CHARS + dense * 1.25 + astral * 2 + between / 2;
}

/** About how many characters of `text` take `tokens` in the estimate, by the text's own mix of scripts. */
export function charsForTokens(text: string, tokens: number): number {
  return charsForLatin(text, tokens * LATIN_TOKEN_CHARS);
}

/**
 * The cuts of the prompt count in characters of Latin text (an old result keeps 600 of them): a text's
 * length as Latin text of the same estimate, which is its own length when it is Latin. Cached per message.
 */
export function latinLength(m: ChatMessage): number {
  let length = latinCache.get(m);
  if (length === undefined) {
    length = latinLengthOf(m.content);
    latinCache.set(m, length);
  }
  return length;
}
const latinCache = new WeakMap<ChatMessage, number>();

export function latinLengthOf(text: string): number {
  return NON_LATIN.test(text) ? Math.ceil(tokenWeight(text) * LATIN_TOKEN_CHARS) : text.length;
}

/** How many characters of `text` are as long in the estimate as `latinChars` characters of Latin text. */
export function charsForLatin(text: string, latinChars: number): number {
  if (latinChars <= 0) return 0;
  if (!NON_LATIN.test(text)) return Math.floor(latinChars);
  return Math.floor((latinChars * text.length) / (tokenWeight(text) * LATIN_TOKEN_CHARS));
}

const tokenCache = new WeakMap<object, number>();

export function messageTokens(m: ChatMessage): number {
  let tokens = tokenCache.get(m);
  if (tokens === undefined) {
    const calls = m.role === "assistant" && m.toolCalls ? estimateTokens(JSON.stringify(m.toolCalls)) : 0;
    tokens = estimateTokens(m.content) + calls + 6;
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
