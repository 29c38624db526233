/**
 * A call's arguments as an approval shows them to the owner, who approves only what they can read. A run
 * of spaces and tabs is shown as one space and a run of line feeds as one, so padding cannot push the rest
 * out of view; a line break stays one (JSON shows it as \n): to a shell it starts another command, which the
 * owner must see. Every other kind of space, and every invisible or reordering character, is shown as its
 * code point. A value still longer than WHOLE_CHARS keeps its head and its tail around a count of the
 * characters left out; a chat then offers no Approve (see shownWhole), and the owner reads the whole call
 * with `hermes approvals` or on the dashboard, which show every value whole.
 */

/**
 * Characters that show nothing, show as a space they are not, or change how the rest is shown: format
 * characters (bidi controls that turn "txt.exe" around, zero-width spaces and joiners), control characters
 * (C0 but tab and line feed, DEL, C1), letters and marks that render blank (Hangul fillers, the Braille
 * blank, the combining grapheme joiner, variation selectors: 1,400 of them pushed a command's end out of
 * view), and whitespace other than a space, a tab or a line feed (a no-break space, which a shell takes for
 * part of a word; a carriage return; U+2028, which some chats show as a new line): shown as their code
 * points, `<U+202E>`. (Not \p{Cc}: it holds the tab and the line feed, which flatten shows on purpose.)
 */
const INVISIBLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: so are lone combining marks (U+034F, selectors)
  /[\p{Cf}\u0000-\u0008\u000E-\u001F\u007F-\u009F\u034F\u115F\u1160\u17B4\u17B5\u2800\u3164\uFE00-\uFE0F\uFFA0\r\v\f\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]|[\u{E0100}-\u{E01EF}]/gu;

/** The longest value (or key) a chat's approval request shows whole. */
const WHOLE_CHARS = 1500;
/** What a chat shows of a longer one: its first and its last characters. */
const END_CHARS = 200;

/** A value as shown before any cut: runs of spaces and tabs, and of line feeds, as one; invisible characters as code points. */
function flatten(text: string): string {
  return text
    .replace(/[ \t]+/g, " ")
    .replace(/\n+/g, "\n")
    .replace(INVISIBLE, (c, at: number, whole: string) =>
      presentsEmoji(c, at, whole) ? c : `<U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}>`,
    );
}

/**
 * Part of an emoji as shown, not padding: a presentation selector right after a character that takes one
 * ("❤️", "1️⃣"), or a joiner between two emoji ("👨‍👩‍👧").
 */
function presentsEmoji(c: string, at: number, whole: string): boolean {
  if (c === "\u200D") return joinsEmoji(at, whole);
  if (c !== "\uFE0E" && c !== "\uFE0F") return false;
  const before = Array.from(whole.slice(Math.max(0, at - 2), at)).at(-1) ?? "";
  return /^\p{Emoji}$/u.test(before);
}

/** A zero-width joiner between two emoji ("❤️‍🔥", "👨‍👩‍👧"): the emoji they make together is what is shown. */
function joinsEmoji(at: number, whole: string): boolean {
  const before = Array.from(whole.slice(Math.max(0, at - 5), at));
  let prev = before.pop() ?? "";
  if (prev === "\uFE0F" || /^\p{Emoji_Modifier}$/u.test(prev)) prev = before.pop() ?? "";
  const next = Array.from(whole.slice(at + 1, at + 3))[0] ?? "";
  return /^\p{Extended_Pictographic}$/u.test(prev) && /^\p{Extended_Pictographic}$/u.test(next);
}

export function shownText(text: string, whole = WHOLE_CHARS): string {
  const flat = flatten(text);
  if (flat.length <= whole) return flat;
  return `${flat.slice(0, END_CHARS)}[… ${flat.length - 2 * END_CHARS} characters left out …]${flat.slice(-END_CHARS)}`;
}

/**
 * The arguments as JSON (indented by `indent`, else on one line) with every string, keys too, as
 * shownText shows it; `whole` Infinity shows every value whole (the dashboard).
 */
export function shownArgs(args: unknown, indent?: number, whole = WHOLE_CHARS): string {
  return JSON.stringify(
    mapStrings(args ?? {}, (s) => shownText(s, whole)),
    null,
    indent,
  );
}

/** True when shownArgs leaves nothing out of `args`: only then may a chat's request be approved where it is read. */
export function shownWhole(args: unknown): boolean {
  let whole = true;
  mapStrings(args ?? {}, (s) => {
    if (flatten(s).length > WHOLE_CHARS) whole = false;
    return s;
  });
  return whole;
}

function mapStrings(value: unknown, map: (s: string) => string): unknown {
  if (typeof value === "string") return map(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, map));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, v]) => [map(key), mapStrings(v, map)]));
  }
  return value;
}
