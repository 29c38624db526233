import { isMap, isSeq, parseDocument, stringify } from "yaml";

export type PairPlatform = "telegram" | "discord";

/**
 * Adds a user to `connectors.<platform>.allowed_users` in config text, changing nothing else: the
 * yaml library's Document finds the list and builds the entry, and only the list's own text is
 * rewritten (a whole-document re-print would re-space flow lists and could re-wrap lines). Comments,
 * layout and `${VAR}` references elsewhere stay byte for byte. Unchanged text when the id is there.
 */
export function addAllowedUser(text: string, platform: PairPlatform, id: string, name?: string): string {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new Error(`the config does not parse: ${doc.errors[0]?.message.split("\n")[0]}`);
  const path = ["connectors", platform, "allowed_users"];
  const entry = entryText(platform, id, name);
  const list = doc.getIn(path, true);
  if (isSeq(list) && list.range) {
    const ids = list.items.map((item) => String(isMap(item) ? item.get("id") : (item as { value?: unknown })?.value));
    if (ids.includes(id)) return text;
    const [start, end] = list.range;
    if (list.flow) {
      const inner = text.slice(start + 1, text.lastIndexOf("]", end)).trim();
      return `${text.slice(0, start)}[${inner ? `${inner}, ` : ""}${entry}]${text.slice(text.lastIndexOf("]", end) + 1)}`;
    }
    const indent = start - text.lastIndexOf("\n", start - 1) - 1;
    const last = list.items[list.items.length - 1] as { range?: [number, number, number] } | undefined;
    const lineEnd = text.indexOf("\n", last?.range?.[1] ?? start);
    const at = lineEnd < 0 ? text.length : lineEnd;
    return `${text.slice(0, at)}\n${" ".repeat(indent)}- ${entry}${text.slice(at)}`;
  }
  if (list !== undefined && list !== null) throw new Error(`${path.join(".")} is not a list`);
  // No list yet: the Document puts one in (the file is re-printed, its comments kept).
  doc.setIn(path, doc.createNode([JSON.parse(`[${jsonEntry(platform, id, name)}]`)[0]], { flow: true }));
  return doc.toString({ lineWidth: 0 });
}

/** Telegram ids are numbers; Discord's snowflakes are written as strings (they exceed a double's precision). */
function entryText(platform: PairPlatform, id: string, name?: string): string {
  const idText = platform === "telegram" ? id : JSON.stringify(id);
  return name ? `{ id: ${idText}, name: ${stringify(name, { lineWidth: 0 }).trim()} }` : idText;
}

function jsonEntry(platform: PairPlatform, id: string, name?: string): string {
  const idJson = platform === "telegram" ? id : JSON.stringify(id);
  return name ? `{"id": ${idJson}, "name": ${JSON.stringify(name)}}` : idJson;
}
