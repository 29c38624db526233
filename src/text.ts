/** Cuts text longer than `max` keeping its head and tail, with a marker that says how much was cut. */
export function truncateResult(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = (cut: number) => `\n[… ${cut} characters cut …]\n`;
  const room = Math.max(0, max - marker(text.length).length);
  // Never between the two halves of a character beyond U+FFFF (an emoji): half of one is no character.
  const head = wholeEnd(text, Math.ceil(room * 0.7));
  let tail = room - Math.ceil(room * 0.7);
  if (tail > 0 && isLowSurrogate(text.charCodeAt(text.length - tail))) tail--;
  return text.slice(0, head) + marker(text.length - head - tail) + (tail > 0 ? text.slice(-tail) : "");
}

/**
 * `text` as `keep` characters: its head (`headShare` of what is left beside the marker) and its tail around
 * `marker(left out)`. The cut of a message or a call that must fit a budget (see fitLatin for other scripts).
 */
export function cutAround(text: string, keep: number, marker: (leftOut: number) => string, headShare: number): string {
  const mark = marker(text.length - keep);
  // Never between the two halves of a character beyond U+FFFF, as truncateResult.
  const head = wholeEnd(text, Math.max(0, Math.floor((keep - mark.length) * headShare)));
  let tail = Math.max(0, keep - mark.length - head);
  if (tail > 0 && isLowSurrogate(text.charCodeAt(text.length - tail))) tail--;
  return text.slice(0, head) + mark + (tail > 0 ? text.slice(text.length - tail) : "");
}

const isLowSurrogate = (c: number) => c >= 0xdc00 && c < 0xe000;

/** `end`, or one less when the character at `end` is the second half of a pair: text.slice(0, end) ends whole. */
export function wholeEnd(text: string, end: number): number {
  return end > 0 && end < text.length && isLowSurrogate(text.charCodeAt(end)) ? end - 1 : end;
}

/** One line for logs, events and the audit trail. */
export function summarize(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, wholeEnd(flat, max - 1))}…` : flat;
}
