import { type Document, isMap, isSeq, parseDocument, type YAMLSeq } from "yaml";

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
  const list = doc.getIn(path, true);
  if (list !== undefined && list !== null && !isSeq(list)) throw new Error(`${path.join(".")} is not a list`);
  if (isSeq(list) && idsOf(list).includes(id)) return text;
  const added =
    isSeq(list) && list.range ? insertInto(text, list, entryText(platform, id, name)) : withNewList(doc, path, platform, id, name);
  // The written file must hold the user and parse to the same settings plus them, or nothing is written.
  const check = parseDocument(added);
  const after = check.getIn(path, true);
  if (
    check.errors.length > 0 ||
    !isSeq(after) ||
    !idsOf(after).includes(id) ||
    after.items.length !== (isSeq(list) ? list.items.length : 0) + 1
  ) {
    throw new Error(`could not add ${id} to ${path.join(".")} without changing the rest of the file; add it by hand`);
  }
  return added;
}

function idsOf(list: YAMLSeq): string[] {
  return list.items.map((item) => String(isMap(item) ? item.get("id") : (item as { value?: unknown })?.value));
}

/** The entry put in after the list's last item, on a line of its own in a block list; only the list's text changes. */
function insertInto(text: string, list: YAMLSeq, entry: string): string {
  const [start, end] = list.range as [number, number, number];
  const last = list.items[list.items.length - 1] as { range?: [number, number, number] } | undefined;
  // Where the last item's own text ends (a map item's range runs on over the line break after it).
  let after = last?.range?.[1] ?? start + 1;
  while (after > start && /\s/.test(text[after - 1] ?? "")) after--;
  if (list.flow) {
    if (!last) return `${text.slice(0, start)}[${entry}]${text.slice(text.lastIndexOf("]", end) + 1)}`;
    // Right after the last item, before any comma or comment that follows it.
    return `${text.slice(0, after)}, ${entry}${text.slice(after)}`;
  }
  const indent = start - text.lastIndexOf("\n", start - 1) - 1;
  const lineEnd = text.indexOf("\n", after);
  const at = lineEnd < 0 ? text.length : lineEnd;
  return `${text.slice(0, at)}\n${" ".repeat(indent)}- ${entry}${text.slice(at)}`;
}

/** No list yet: the Document puts one in (the file is re-printed, its comments kept). */
function withNewList(doc: Document, path: string[], platform: PairPlatform, id: string, name?: string): string {
  const idValue = platform === "telegram" ? Number(id) : id;
  doc.setIn(path, doc.createNode([name ? { id: idValue, name } : idValue], { flow: true }));
  return doc.toString({ lineWidth: 0 });
}

/**
 * Telegram ids are numbers; Discord's snowflakes are written as strings (they exceed a double's precision).
 * A name is written plain when it reads back as itself inside a flow map (`Eve Smith`), else quoted
 * (`"Smith, John"`, `"Ann {x}"`, `"# 1"`).
 */
function entryText(platform: PairPlatform, id: string, name?: string): string {
  const idText = platform === "telegram" ? id : JSON.stringify(id);
  if (!name) return idText;
  const plain = `{ id: ${idText}, name: ${name} }`;
  return readsAsItself(plain, name) && name.trim() === name ? plain : `{ id: ${idText}, name: ${JSON.stringify(name)} }`;
}

/** Whether `entry` in a flow list reads back with `name` (an alias such as `*star` does not even resolve). */
function readsAsItself(entry: string, name: string): boolean {
  try {
    const read = parseDocument(`[${entry}]`);
    return read.errors.length === 0 && (read.toJS() as { name?: unknown }[])[0]?.name === name;
  } catch {
    return false;
  }
}
