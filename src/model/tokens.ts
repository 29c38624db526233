import { truncateResult } from "../text.js";
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
const NON_LATIN = /[\u0370-\u1fff\u2070-\uffff]/;

/**
 * Counted in one pass over the UTF-16 code units (a long text in another script is read every step of a
 * run). Dense (1.25): Hangul jamo and syllables, CJK and kana through Yi, the private use area (no tokenizer
 * merges it), CJK compatibility and fullwidth forms, the specials (U+FFFD, what a binary file read as text
 * is full of). Astral (2): a high surrogate; its low one is counted with it. Between (0.5): the rest past
 * U+036F but general punctuation. A lone low surrogate counts as Latin.
 */
function tokenWeight(text: string): number {
  if (!NON_LATIN.test(text)) return text.length / LATIN_TOKEN_CHARS;
  let dense = 0;
  let astral = 0;
  let between = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x370 || (c >= 0x2000 && c < 0x2070) || (c >= 0xdc00 && c < 0xe000)) continue;
    if (c >= 0xd800 && c < 0xdc00) astral++;
    else if (
      (c >= 0x1100 && c < 0x1200) ||
      (c >= 0x2e80 && c < 0xa4d0) ||
      (c >= 0xa960 && c < 0xa980) ||
      (c >= 0xac00 && c < 0xd800) ||
      (c >= 0xe000 && c < 0xfb00) ||
      (c >= 0xfe30 && c < 0xfe50) ||
      c >= 0xff00
    )
      dense++;
    else between++;
  }
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
  return latinLengthAt(text, LATIN_TOKEN_CHARS);
}

/** The same at `charsPerToken` characters of Latin text a token (the skill index's cap counts 4). */
export function latinLengthAt(text: string, charsPerToken: number): number {
  return NON_LATIN.test(text) ? Math.ceil(tokenWeight(text) * charsPerToken) : text.length;
}

/** How many characters of `text` are as long in the estimate as `latinChars` characters of Latin text. */
export function charsForLatin(text: string, latinChars: number): number {
  if (latinChars <= 0) return 0;
  if (!NON_LATIN.test(text)) return Math.floor(latinChars);
  return Math.floor((latinChars * text.length) / (tokenWeight(text) * LATIN_TOKEN_CHARS));
}

/**
 * The cut `cutAt(keep)` of `text` (keeping `keep` of its characters) as long as `latinChars` characters of
 * Latin text in the estimate, keeping at least `min`. charsForLatin counts at the whole text's average: a
 * text whose kept head or tail is in a denser script than the rest (a Chinese page, then a long log) keeps
 * fewer characters, until what it keeps fits. Latin text is cut once, at `latinChars`.
 */
export function fitLatin(text: string, latinChars: number, cutAt: (keep: number) => string, min = 0): string {
  let keep = Math.max(min, charsForLatin(text, latinChars));
  let cut = cutAt(keep);
  if (!NON_LATIN.test(text)) return cut;
  for (let length = latinLengthOf(cut); length > latinChars && keep > min; length = latinLengthOf(cut)) {
    keep = Math.max(min, Math.min(keep - 1, Math.floor((keep * latinChars) / length)));
    cut = cutAt(keep);
  }
  return cut;
}

/** `text` cut as truncateResult cuts it (its head and tail around a marker) to `latinChars` of Latin text (see fitLatin). */
export function truncateLatin(text: string, latinChars: number): string {
  return fitLatin(text, latinChars, (max) => truncateResult(text, max));
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
