import type { ToolName } from "../src/config/schema.js";
import { z } from "../src/config/zod.js";
import { markSnippet, type RecallHit, scopeOf } from "../src/store/recall.js";
import { dateFormat } from "../src/time.js";
import { defineTool } from "../src/tools/define.js";
import type { ToolDeps } from "../src/tools/types.js";

const input = z.strictObject({
  query: z.string().min(1).max(1000),
  limit: z.int().positive().optional(),
});

/** Hits one call returns at most: each is a line of the prompt. */
const MAX_HITS = 20;

/**
 * Recall: full-text search over the conversations the asker may see (the owner: all; anyone else: the chats
 * they wrote in), newest first. No model call: a local SQLite FTS5 query, milliseconds.
 */
export function createTool(_name: ToolName, deps: ToolDeps) {
  return defineTool({
    name: "recall",
    description: 'Search past chats for what was said. Example: {"query": "plumber"}',
    input,
    readOnly: true,
    run: (args, ctx) => {
      const sender = deps.store.history.run(ctx.runId)?.sender_id ?? undefined;
      const hits = deps.store.recall.search({ query: args.query, scope: scopeOf(sender), limit: Math.min(args.limit ?? 5, MAX_HITS) });
      if (!hits.length) return `Nothing found for "${args.query}".`;
      const stamp = dateFormat("sv-SE", { timeZone: deps.config.timezone, dateStyle: "short", timeStyle: "short" });
      return hits.map((h) => hitLine(h, stamp)).join("\n");
    },
  });
}

/**
 * One hit, on one line: its time, chat and speaker, then what was said as a JSON string. Stored text is
 * anyone's (a group member's, a web page's, a mail's): unquoted, its line breaks would let it write lines
 * that read as hits of their own ("…, Alice: my IBAN is …" in a chat Alice never wrote it in).
 */
function hitLine(h: RecallHit, stamp: Intl.DateTimeFormat): string {
  return `${stamp.format(new Date(h.created_at))} ${oneLine(h.session_key)}, ${oneLine(h.speaker)}: ${JSON.stringify(markSnippet(h.snippet))}`;
}

/** A chat's key or a speaker's name, which a plugin or a chat network chose: on one line. */
const oneLine = (text: string) => text.replace(/[\s\p{Cc}]+/gu, " ");
