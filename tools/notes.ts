import type { ToolName } from "../src/config/schema.js";
import { z } from "../src/config/zod.js";
import type { Note } from "../src/store/notes.js";
import { defineTool } from "../src/tools/define.js";
import type { CallInfo, ToolDeps } from "../src/tools/types.js";
import { readUntrusted } from "./untrusted.js";

const input = z.discriminatedUnion("action", [
  z.strictObject({ action: z.literal("add"), text: z.string().min(1).max(4000) }),
  z.strictObject({ action: z.literal("list") }),
  z.strictObject({ action: z.literal("search"), query: z.string().min(1) }),
  z.strictObject({ action: z.literal("delete"), id: z.int().positive() }),
]);

/**
 * The owner's notes, kept in SQLite. A note outlives its conversation and later ones read it as the
 * owner's own, so adding one once the session has read text from outside asks the owner first: a
 * stranger's words never become a note (and through it a fact) without a yes.
 */
export function createTool(_name: ToolName, deps: ToolDeps) {
  const notes = deps.store.notes;
  const needsConfirmation = (args: z.output<typeof input>, call: CallInfo): boolean =>
    args.action === "add" && readUntrusted(deps.store.history, call.runId);
  return defineTool({
    name: "notes",
    description:
      'Keep the owner\'s notes: add one, list all, search them, delete by id. Use when asked to note or jot down something. Example: {"action": "add", "text": "buy milk"}.',
    input,
    readOnly: false,
    needsConfirmation,
    confirmReason:
      "a note outlives this conversation and later ones read it as your own: adding one after reading web pages, files, mail or tool results needs your yes",
    run: (args) => {
      switch (args.action) {
        case "add": {
          const note = notes.add(args.text);
          return `Saved note #${note.id}.`;
        }
        case "list":
          return formatNotes(notes.list(), notes.count(), "No notes yet.", "notes");
        case "search":
          return formatNotes(
            notes.search(args.query),
            notes.countMatching(args.query),
            `No note contains "${args.query}".`,
            "matching notes",
          );
        case "delete":
          if (!notes.remove(args.id)) throw new Error(`there is no note #${args.id}`);
          return `Deleted note #${args.id}.`;
      }
    },
  });
}

/** The notes, and how many older ones were left out (the list holds the newest). */
function formatNotes(list: Note[], total: number, empty: string, what: string): string {
  if (list.length === 0) return empty;
  const lines = list.map((n) => `#${n.id} (${new Date(n.created_at).toISOString().slice(0, 10)}): ${n.text}`);
  if (total > list.length) lines.unshift(`(${total - list.length} older ${what} not shown; the newest ${list.length}:)`);
  return lines.join("\n");
}
