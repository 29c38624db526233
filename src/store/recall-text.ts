/**
 * What the recall index holds and how a person's words become an FTS5 query.
 *
 * The index is one FTS5 table with SQLite's `unicode61` tokenizer (`remove_diacritics 2`): words split on
 * anything that is not a letter or digit, folded to lower case, Latin accents removed (café = cafe,
 * Müller = muller). Scripts written without spaces (Chinese, Japanese, Thai, …) would be one "word" per
 * sentence, so each of their characters is indexed as a word of its own, set apart by a zero-width space
 * (U+200B, a separator to unicode61, invisible in a snippet); a query in those scripts becomes a phrase of
 * characters, which matches them side by side. One table serves every language, a one- or two-character
 * Chinese word included (a trigram table needs three), at the write cost of one index.
 */

import { withoutTimeNote } from "../time-note.js";

/** Characters of scripts written without spaces between words. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const UNSPACED_ALL = new RegExp(UNSPACED.source, "gu");
const ZWSP = "\u200b";
const MIN_PREFIX_CHARS = 3;
/**
 * The words a query keeps: its first 16 (a phrase repeated counts once). Each word is one more walk over the
 * list of messages that hold it, in SQLite's synchronous call on the daemon's only thread: a pasted
 * paragraph, or 500 words of "a-a-a-…" from a model, took a second on 30,000 messages, with every chat waiting.
 */
export const MAX_QUERY_WORDS = 16;

/** Tool results longer than this are left out: long ones are pages and listings, not what was said. */
export const MAX_TOOL_RESULT_CHARS = 1000;

/** Marks around a match in a snippet; made into brackets, `<mark>` or nothing where it is shown. */
export const MATCH_START = "\u0002";
export const MATCH_END = "\u0003";

/**
 * The text a message adds to the index, or undefined for one that adds nothing: empty content (an
 * assistant turn that only calls tools), a long tool result, or a result of recall itself (a search
 * would otherwise find its own earlier answers).
 */
export function indexedText(role: string, content: string, toolName: string | null): string | undefined {
  if (role === "system" || !content.trim()) return undefined;
  if (role === "tool" && (content.length > MAX_TOOL_RESULT_CHARS || toolName === "recall")) return undefined;
  // Without the time note the runner appends to each user message (every message would match "december"),
  // and without a skill's instructions a chat's /<skill> command puts in front of the person's words.
  // Full-width letters and digits and half-width katakana (what a Japanese or Chinese keyboard types) are
  // indexed as the letters they are, so "2024" finds "２０２４年"; the query is read the same way.
  return spaceUnspaced(widthFolded(role === "user" ? withoutSkillInstructions(withoutTimeNote(content)) : content));
}

/** Full-width and half-width forms (U+FF01–U+FFEE) as the letters, digits and signs they are; nothing else changes (NFKC would also make "1½" "11⁄2" and "m²" "m2" in a snippet). */
export function widthFolded(text: string): string {
  return text.replace(/([^\uFF01-\uFFEE]?)([\uFF01-\uFFEE]+)/gu, (_m, before: string, run: string) => {
    const folded = run.replace(/[\uFFA0-\uFFDC]|[^\uFFA0-\uFFDC]+/g, (part) =>
      part.length === 1 && part >= "\uFFA0" && part <= "\uFFDC" ? (hangulLetter(part.normalize("NFKC")) ?? part) : part.normalize("NFKC"),
    );
    // A half-width voiced mark (ﾞ ﾟ) joins the kana before it, a full-width one too ("カﾞ" is "ガ").
    return /^[\u3099\u309A]/.test(folded) ? (before + folded).normalize("NFC") : before + folded;
  });
}

/**
 * A half-width Hangul letter (ﾻ) as the letter a keyboard types (ㅋ U+314B): NFKC goes a step further, to a
 * conjoining jamo (ᄏ U+110F), which no one types and which joins the letters after it into syllables.
 */
function hangulLetter(jamo: string): string | undefined {
  if (!hangulLetters) {
    hangulLetters = new Map();
    for (let cp = 0x3131; cp <= 0x3164; cp++) hangulLetters.set(String.fromCodePoint(cp).normalize("NFKC"), String.fromCodePoint(cp));
  }
  return hangulLetters.get(jamo);
}
/** Made at the first half-width Hangul letter, not at every start. */
let hangulLetters: Map<string, string> | undefined;

/**
 * The instructions `withSkill` (src/skills/commands.ts) puts in front of the words of a `/<skill> text`
 * message: the skill's, not the person's, so a search for a word of them would find every use of the skill.
 * In a group the runner puts the sender's name in front ("Alice: "), which stays.
 */
const SKILL_INSTRUCTIONS =
  /^([^\n]*?: )?Use the skill "[a-z0-9-]+" for this request\. Its instructions:\n<skill name="[a-z0-9-]+">\n[\s\S]*?\n<\/skill>\n\n/;

export function withoutSkillInstructions(text: string): string {
  return text.includes("Use the skill ") ? text.replace(SKILL_INSTRUCTIONS, "$1") : text;
}

/** Sets every character of an unspaced script apart, so the tokenizer sees each as a word. */
export function spaceUnspaced(text: string): string {
  return UNSPACED.test(text) ? text.replace(UNSPACED_ALL, (c) => `${ZWSP}${c}${ZWSP}`) : text;
}

/** A snippet as stored text reads: without the zero-width spaces the index added. */
export function cleanSnippet(snippet: string): string {
  return snippet.replaceAll(ZWSP, "");
}

/**
 * An FTS5 query from whatever a person or a model typed, or undefined when it holds no word at all.
 * Never a syntax error: every chunk between spaces becomes a quoted phrase of its words (FTS5's operators,
 * quotes and brackets are dropped with the other punctuation), every chunk must match (AND), and the
 * last word of a chunk matches as a prefix (plumber finds plumbers) when it has three characters or more
 * (a one-letter prefix would merge the lists of thousands of words). Only the first MAX_QUERY_WORDS words count.
 */
export function toFtsQuery(text: string): string | undefined {
  const phrases = new Set<string>();
  let room = MAX_QUERY_WORDS;
  for (const chunk of widthFolded(text).split(/\s+/)) {
    const words = wordsOf(chunk).slice(0, room);
    const last = words.at(-1);
    if (!last) continue;
    const prefix = UNSPACED.test(last) || letters(last) < MIN_PREFIX_CHARS ? "" : "*";
    const phrase = `"${words.join(" ")}"${prefix}`;
    if (phrases.has(phrase)) continue;
    phrases.add(phrase);
    room -= words.length;
    if (room === 0) break;
  }
  return phrases.size ? [...phrases].join(" ") : undefined;
}

/**
 * A word's length in letters: a Hangul syllable counts the 2–3 letters (jamo) it is written with, and a
 * combining accent (U+0300–U+036F, which the index folds away) counts none.
 */
function letters(word: string): number {
  const counted = HANGUL.test(word) ? word.normalize("NFD") : word;
  return counted.replace(FOLDED_ACCENTS, "").length;
}
const HANGUL = /\p{Script=Hangul}/u;
const FOLDED_ACCENTS = /[\u0300-\u036f]/g;

/** The words of one chunk: runs of letters, marks and digits, with each unspaced-script character alone. */
function wordsOf(chunk: string): string[] {
  const words: string[] = [];
  for (const run of chunk.match(/[\p{L}\p{M}\p{N}]+/gu) ?? []) {
    // Marks alone are no word: accents fold to nothing in the index, and an empty prefix matches every message.
    if (!/[\p{L}\p{N}]/u.test(run)) continue;
    for (const part of spaceUnspaced(run).split(ZWSP)) if (part) words.push(part);
  }
  return words;
}
