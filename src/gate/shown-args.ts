/**
 * A call's arguments as an approval shows them to the owner, who must see what would run: the end of
 * every value included. A run of whitespace is shown as one space, so padding cannot push the rest out
 * of view; a value still longer than SHOWN_CHARS keeps its head and its tail around a count of the
 * characters left out. The owner then sees that something is left out, and where.
 */

/** How many characters of one value (or key) an approval shows at most, besides the marker. */
const SHOWN_CHARS = 400;

export function shownText(text: string): string {
  const flat = text.replace(/\s+/g, " ");
  if (flat.length <= SHOWN_CHARS) return flat;
  const half = SHOWN_CHARS / 2;
  return `${flat.slice(0, half)}[… ${flat.length - 2 * half} characters left out …]${flat.slice(-half)}`;
}

/** The arguments as JSON (indented by `indent`, else on one line) with every string, keys too, as shownText shows it. */
export function shownArgs(args: unknown, indent?: number): string {
  return JSON.stringify(shortened(args ?? {}), null, indent);
}

function shortened(value: unknown): unknown {
  if (typeof value === "string") return shownText(value);
  if (Array.isArray(value)) return value.map(shortened);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, v]) => [shownText(key), shortened(v)]));
  }
  return value;
}
