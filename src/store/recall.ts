import type Database from "better-sqlite3";
import { withoutTimeNote } from "../time-note.js";
import { cleanSnippet, indexedText, MATCH_END, MATCH_START, spaceUnspaced, toFtsQuery, widthFolded } from "./recall-text.js";
import { statements } from "./statements.js";

/** The connection type, named here rather than imported from db.ts, which loads this file through the migrations. */
type Db = Database.Database;

/** Whose conversations a search may see: everything (the owner), or one person's chats and shared ones. */
export type RecallScope = { all: true } | { person: string };

/** One message that matched, newest first. */
export interface RecallHit {
  message_id: number;
  session_id: number;
  session_key: string;
  created_at: number;
  role: string;
  /** Who said it: the sender's name, `hermes`, or `<tool> result`. */
  speaker: string;
  /** Text around the match, the matched words between MATCH_START and MATCH_END. */
  snippet: string;
}

export interface RecallQuery {
  query: string;
  scope: RecallScope;
  /** Only this session key (`telegram:123`, `cli:default`). */
  session?: string;
  limit?: number;
}

/**
 * Senders that are the owner: the shell, the owner's jobs, and the HTTP doors behind the owner's token (`/v1/ask`
 * and the OpenAI-compatible API alike). Anyone else (a person on a chat network, a webhook's sender) sees only
 * the sessions they wrote in.
 */
const OWNER_SENDERS = new Set(["cli", "cron", "http", "api"]);

/** The scope of a run's sender (`telegram:123`, `cli`, …); a run without a recorded sender sees nothing but its own session. */
export function scopeOf(senderId: string | undefined): RecallScope {
  if (senderId && OWNER_SENDERS.has(senderId)) return { all: true };
  return { person: senderId ?? "" };
}

export const DEFAULT_RECALL_LIMIT = 8;
export const MAX_RECALL_LIMIT = 50;
/** Words of context a snippet keeps around the match (an unspaced-script character counts as a word). */
const SNIPPET_WORDS = 20;

const HIT_COLUMNS = `m.id AS message_id, m.session_id, s.key AS session_key, m.created_at, m.role, m.tool_name,
  r.sender_id, r.sender_name, snippet(recall_index, 0, char(2), char(3), '…', ${SNIPPET_WORDS}) AS snippet`;
const HIT_FROM = `FROM recall_index JOIN messages m ON m.id = recall_index.rowid JOIN sessions s ON s.id = m.session_id
  LEFT JOIN runs r ON r.id = m.run_id WHERE recall_index MATCH @match AND (@session IS NULL OR s.key = @session)`;
/** A person's chats: every session under a key where they sent a message (a private chat, a group they write in). */
const PERSON_SCOPE = "AND s.key IN (SELECT ps.key FROM runs pr JOIN sessions ps ON ps.id = pr.session_id WHERE pr.sender_id = @person)";
const NEWEST_FIRST = "ORDER BY recall_index.rowid DESC LIMIT @limit";

interface HitRow extends Omit<RecallHit, "speaker"> {
  tool_name: string | null;
  sender_id: string | null;
  sender_name: string | null;
}

/**
 * Full-text search over stored messages (SQLite FTS5), newest first. The index is written with each
 * message (HistoryStore.appendMessage, same transaction) and built for older databases by migration 14.
 */
export class RecallStore {
  private readonly q;

  constructor(db: Db) {
    registerRecallText(db);
    this.q = statements(db, {
      all: () => db.prepare(`SELECT ${HIT_COLUMNS} ${HIT_FROM} ${NEWEST_FIRST}`),
      person: () => db.prepare(`SELECT ${HIT_COLUMNS} ${HIT_FROM} ${PERSON_SCOPE} ${NEWEST_FIRST}`),
    });
  }

  /** The newest matching messages the scope may see; none for a query without a word in it. Never throws for any query text. */
  search(o: RecallQuery): RecallHit[] {
    const match = toFtsQuery(o.query);
    if (!match) return [];
    const limit = Math.min(MAX_RECALL_LIMIT, Math.max(1, Math.trunc(o.limit ?? DEFAULT_RECALL_LIMIT)));
    const params = { match, session: o.session ?? null, limit };
    const rows = ("all" in o.scope ? this.q.all.all(params) : this.q.person.all({ ...params, person: o.scope.person })) as HitRow[];
    return rows.map(toHit);
  }
}

function toHit(r: HitRow): RecallHit {
  return {
    message_id: r.message_id,
    session_id: r.session_id,
    session_key: r.session_key,
    created_at: r.created_at,
    role: r.role,
    speaker: speakerOf(r),
    snippet: withoutName(cleanSnippet(r.snippet), r),
  };
}

/**
 * A group message without the name the runner put in front of it (`Bob: ok`): the hit names its speaker,
 * so the text need not say it again ("Bob: Bob: ok"). Match marks inside the name go with it.
 */
function withoutName(snippet: string, r: HitRow): string {
  const name = r.role === "user" ? r.sender_name : null;
  if (!name) return snippet;
  const prefix = `${widthFolded(name)}: `; // as indexedText wrote it
  let taken = 0;
  let i = 0;
  let open = false;
  for (; i < snippet.length && taken < prefix.length; i++) {
    const c = snippet[i];
    if (c === MATCH_START) open = true;
    else if (c === MATCH_END) open = false;
    else if (c === prefix[taken]) taken++;
    else return snippet;
  }
  if (taken < prefix.length) return snippet;
  if (open && snippet[i] === MATCH_END) return snippet.slice(i + 1);
  return `${open ? MATCH_START : ""}${snippet.slice(i)}`;
}

function speakerOf(r: HitRow): string {
  if (r.role === "assistant") return "hermes";
  if (r.role === "tool") return `${r.tool_name ?? "tool"} result`;
  return r.sender_name ?? r.sender_id ?? "user";
}

/** A snippet with its match marks made into `open`…`close` (brackets for text, nothing for JSON). */
export function markSnippet(snippet: string, open = "[", close = "]"): string {
  return snippet.replaceAll(MATCH_START, open).replaceAll(MATCH_END, close);
}

/** Adds a stored message to the index: the statement HistoryStore runs in the transaction that stores it. */
export function recallWriter(db: Db): (id: number, role: string, content: string, toolName: string | null) => void {
  const insert = db.prepare("INSERT INTO recall_index (rowid, text) VALUES (?, ?)");
  return (id, role, content, toolName) => {
    const text = indexedText(role, content, toolName);
    if (text !== undefined) insert.run(id, text);
  };
}

/**
 * The text the index holds for a message, as SQL (`recall_text(role, content, tool_name)`): the index reads
 * it through the `recall_source` view to make snippets, so every connection that searches registers it.
 * It must stay what was indexed (`indexedText`), or snippets would mark the wrong words.
 */
export function registerRecallText(db: Db): void {
  db.function("recall_text", { deterministic: true }, (role, content, toolName) =>
    typeof role === "string" && typeof content === "string"
      ? (indexedText(role, content, typeof toolName === "string" ? toolName : null) ?? null)
      : null,
  );
}

/**
 * Migration 19's data step: the messages of a chat's `/<skill>` command were indexed with the skill's
 * instructions; each is taken out of the index with the text it was indexed with, and put back with the
 * person's words alone.
 */
export function reindexSkillMessages(db: Db): void {
  const remove = db.prepare("INSERT INTO recall_index (recall_index, rowid, text) VALUES ('delete', ?, ?)");
  const write = recallWriter(db);
  const rows = db
    .prepare("SELECT id, content FROM messages WHERE role = 'user' AND content LIKE '%Use the skill \"%' ORDER BY id")
    .all() as { id: number; content: string }[];
  // Only a message the index holds with the instructions: one indexed by migration 17 in the same start (a
  // database from before it) has its words alone already, and deleting a text never indexed corrupts FTS5.
  const indexedWithThem = db.prepare("SELECT 1 FROM recall_index WHERE recall_index MATCH ? AND rowid = ?").pluck();
  for (const r of rows) {
    const before = spaceUnspaced(withoutTimeNote(r.content));
    if (indexedText("user", r.content, null) === before) continue; // the words only mention it: indexed as they are
    if (!indexedWithThem.get('"for this request its instructions"', r.id)) continue;
    remove.run(r.id, before);
    write(r.id, "user", r.content, null);
  }
}

/** Migrations 14's and 17's data step: indexes every message already stored, in batches (a write may not run inside a read). */
export function fillRecallIndex(db: Db): void {
  const write = recallWriter(db);
  const batch = db.prepare("SELECT id, role, content, tool_name FROM messages WHERE id > ? ORDER BY id LIMIT 5000");
  for (let after = 0; ; ) {
    const rows = batch.all(after) as { id: number; role: string; content: string; tool_name: string | null }[];
    const last = rows.at(-1);
    if (!last) return;
    for (const r of rows) write(r.id, r.role, r.content, r.tool_name);
    after = last.id;
  }
}
