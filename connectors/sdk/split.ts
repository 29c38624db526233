import { splitMarkdown } from "../markdown.js";

/** Below this a split cannot keep a code fence whole; limits smaller than it are raised to it. */
const SMALLEST_LIMIT = 16;

/**
 * Splits a reply into messages of at most `limit` characters, in order, on paragraph and line boundaries
 * (a fenced code block cut in two is closed and reopened). What hermes does with `limits.text`; exported
 * for plugins that must split something themselves.
 */
export function splitText(text: string, limit: number): string[] {
  const room = Math.max(SMALLEST_LIMIT, Math.floor(limit));
  return splitMarkdown(text, room).flatMap((piece) => cutToSize(piece, room));
}

function cutToSize(piece: string, room: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < piece.length; i += room) out.push(piece.slice(i, i + room));
  return out.length ? out : [piece];
}
