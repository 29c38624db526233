import Database from "better-sqlite3";
import { loadConfig } from "../config/load.js";
import { MAX_RECALL_LIMIT, markSnippet, type RecallHit, RecallStore } from "../store/recall.js";
import { dateFormat } from "../time.js";

const USAGE = "usage: hermes search QUERY [--session KEY] [--limit N] [--json]\n";

/**
 * `hermes search QUERY [--session KEY] [--limit N] [--json]`: the recall index searched from the shell, as
 * the owner (every session). It reads the database directly and read-only, as `hermes export` does: it
 * works whether or not the daemon runs, and a search never waits behind a run.
 */
export function searchCommand(configPath: string, words: string[], values: { session?: string; limit?: string; json?: boolean }): number {
  const query = words.join(" ").trim();
  const limit = values.limit === undefined ? 20 : Number(values.limit);
  if (!query || !Number.isInteger(limit) || limit < 1 || limit > MAX_RECALL_LIMIT) {
    process.stderr.write(`${USAGE}${query ? `--limit is a whole number from 1 to ${MAX_RECALL_LIMIT}\n` : ""}`);
    return 2;
  }
  const { config } = loadConfig(configPath);
  const db = new Database(config.storage.path, { readonly: true, fileMustExist: true });
  try {
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'recall_index'").get()) {
      process.stderr.write("hermes: this database has no search index yet; it is built when hermes (this version) starts\n");
      return 1;
    }
    const hits = new RecallStore(db).search({ query, scope: { all: true }, limit, ...(values.session ? { session: values.session } : {}) });
    process.stdout.write(
      values.json ? `${JSON.stringify({ query, hits: hits.map(jsonHit) }, null, 2)}\n` : textOf(hits, query, config.timezone),
    );
    return 0;
  } finally {
    db.close();
  }
}

function jsonHit(h: RecallHit) {
  return {
    session: h.session_key,
    session_id: h.session_id,
    message_id: h.message_id,
    at: new Date(h.created_at).toISOString(),
    role: h.role,
    speaker: h.speaker,
    snippet: markSnippet(h.snippet, "", ""),
  };
}

function textOf(hits: RecallHit[], query: string, timeZone: string): string {
  if (!hits.length) return `No message matches "${query}".\n`;
  const stamp = dateFormat("sv-SE", { timeZone, dateStyle: "short", timeStyle: "short" });
  return hits.map((h) => `${stamp.format(new Date(h.created_at))}  ${h.session_key}  ${h.speaker}: ${markSnippet(h.snippet)}\n`).join("");
}
