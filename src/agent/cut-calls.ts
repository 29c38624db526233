// The prompt's copy of a model's own calls, cut to fit the budget: a step the model wrote (a write_file of
// a long text, many parallel calls) can pass the room by itself. Only the copy sent to the model is cut;
// the tools ran, and the owner read, the whole text.
import { fitLatin, latinLengthOf } from "../model/tokens.js";
import type { ChatMessage } from "../model/types.js";
import { cutAround } from "../text.js";

/** A call's arguments and an assistant's text are not cut below this (Latin characters) before whole arguments go. */
const MIN_CALL_CHARS = 100;

/**
 * The steps' own calls cut until `fits`: a step the model wrote can pass the room by itself (a `write_file`
 * with a long text, a long answer before its call). First their long strings (argument values and the
 * assistant's text) are cut in the middle, all to the longest length that fits (not below `floor`); if
 * that is not enough (many calls of short arguments) and `leaveOut`, the largest calls' arguments are left
 * out whole, each replaced by a note. The calls keep their ids and names, and each stays with its result; the tools
 * ran, and the user read, the whole text: only the prompt's copy is cut.
 */
export function cutCalls(
  turn: ChatMessage[],
  fits: (cut: ChatMessage[]) => boolean,
  floor = MIN_CALL_CHARS,
  leaveOut = true,
): ChatMessage[] {
  if (fits(turn)) return turn;
  let longest = 0;
  for (const m of turn) {
    if (m.role !== "assistant") continue;
    for (const text of [m.content, ...(m.toolCalls ?? []).flatMap((c) => stringsOf(c.args))])
      longest = Math.max(longest, latinLengthOf(text));
  }
  // The longest length each string may keep for the turn to fit: a search between the floor and the longest.
  let low = floor;
  let high = longest;
  let best = cutStrings(turn, low);
  if (!fits(best)) return leaveOut ? leaveOutArgs(best, fits) : best;
  while (high - low > Math.max(16, low / 32)) {
    const mid = Math.floor((low + high) / 2);
    const cut = cutStrings(turn, mid);
    if (fits(cut)) {
      low = mid;
      best = cut;
    } else high = mid;
  }
  return best;
}

/** The assistant messages' strings (their text and their calls' arguments) longer than `chars` (Latin characters) cut in the middle, marked. */
function cutStrings(messages: ChatMessage[], chars: number): ChatMessage[] {
  return messages.map((m) => (m.role === "assistant" ? { ...cutArgs(m, chars), content: within(m.content, chars) } : m));
}

/**
 * An assistant message whose calls' string arguments longer than `chars` are cut in the middle (its own text
 * as it is); the message itself when none is that long.
 */
export function cutArgs(m: ChatMessage, chars: number): ChatMessage {
  if (m.role !== "assistant" || !m.toolCalls?.some((c) => stringsOf(c.args).some((text) => latinLengthOf(text) > chars))) return m;
  return { ...m, toolCalls: m.toolCalls.map((c) => ({ ...c, args: mapStrings(c.args, (text) => within(text, chars)) })) };
}

const within = (text: string, chars: number) => (latinLengthOf(text) > chars ? cutCopy(text, chars) : text);

/** `text` cut to `chars` around a marker that says only this copy is cut (a model asked to go on from it must not copy the marker as text). */
function cutCopy(text: string, chars: number): string {
  const marker = (left: number) => `\n[… ${left} characters not shown in this copy …]\n`;
  return fitLatin(text, chars, (keep) => cutAround(text, keep, marker, 0.7));
}

/** The largest calls' arguments (over MIN_CALL_CHARS as JSON) replaced by a note, one call at a time, until the turn fits. */
function leaveOutArgs(turn: ChatMessage[], fits: (cut: ChatMessage[]) => boolean): ChatMessage[] {
  const calls = turn.flatMap((m, i) =>
    m.role === "assistant" ? (m.toolCalls ?? []).map((c, k) => ({ i, k, size: JSON.stringify(c.args ?? null).length })) : [],
  );
  calls.sort((a, b) => b.size - a.size);
  let cut = turn;
  for (const { i, k, size } of calls) {
    if (size <= MIN_CALL_CHARS || fits(cut)) break;
    cut = cut.map((m, at) => {
      if (at !== i || m.role !== "assistant" || !m.toolCalls) return m;
      const note = { "…": `${size} characters not shown` };
      return { ...m, toolCalls: m.toolCalls.map((c, j) => (j === k ? { ...c, args: note } : c)) };
    });
  }
  return cut;
}

function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value && typeof value === "object") return Object.values(value).flatMap(stringsOf);
  return [];
}

function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === "string") return map(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, map));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, map)]));
  return value;
}
