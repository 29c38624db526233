import type Database from "better-sqlite3";
import { fillRecallIndex, reindexSkillMessages } from "./recall.js";

/** The connection type, named here rather than imported from db.ts, which imports this file. */
type Db = Database.Database;

/**
 * The recall index as migration 20 made it (marks part of words), made anew and empty: the migrations that
 * change what is indexed (20, 21) rebuild it from the messages with fillRecallIndex.
 */
const RECALL_INDEX = `
  DROP TABLE recall_index;
  CREATE VIRTUAL TABLE recall_index USING fts5(text,
    tokenize = 'unicode61 remove_diacritics 2 categories ''L* N* Co M*''', columnsize = 0,
    content = 'recall_source', content_rowid = 'id');
  INSERT INTO recall_index (recall_index, rank) VALUES ('pgsz', 1000);
`;

/**
 * Numbered, append-only schema migrations. Never edit a released one: add the next number.
 * Later features add tables here rather than rewriting earlier ones.
 */
export const MIGRATIONS: {
  version: number;
  name: string;
  sql: string /** Runs after `sql`, in its transaction. */;
  data?: (db: Db) => void;
}[] = [
  {
    version: 1,
    name: "sessions, runs, messages, audit trail",
    sql: `
      CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        closed_at INTEGER
      );
      CREATE INDEX sessions_key ON sessions(key, id);
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id),
        source TEXT NOT NULL,
        status TEXT NOT NULL,
        steps INTEGER NOT NULL DEFAULT 0,
        stop_reason TEXT,
        reply TEXT,
        started_at INTEGER NOT NULL,
        ended_at INTEGER
      );
      CREATE INDEX runs_status ON runs(status);
      CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id),
        run_id TEXT,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        tool_calls TEXT,
        tool_call_id TEXT,
        tool_name TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX messages_session ON messages(session_id, id);
      CREATE TABLE tool_calls (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id),
        session_id INTEGER NOT NULL REFERENCES sessions(id),
        step INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        tool TEXT NOT NULL,
        args TEXT NOT NULL,
        decision TEXT NOT NULL,
        reason TEXT,
        decided_by TEXT,
        decided_at INTEGER,
        status TEXT NOT NULL,
        started_at INTEGER,
        duration_ms INTEGER,
        result_chars INTEGER,
        result_hash TEXT,
        summary TEXT,
        error TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX tool_calls_run ON tool_calls(run_id, step, seq);
      CREATE INDEX tool_calls_session ON tool_calls(session_id, created_at);
    `,
  },
  {
    version: 2,
    name: "notes",
    sql: `
      CREATE TABLE notes (
        id INTEGER PRIMARY KEY,
        text TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        deleted_at INTEGER
      );
    `,
  },
  {
    version: 3,
    name: "approvals",
    sql: `
      CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id),
        call_id TEXT NOT NULL REFERENCES tool_calls(id),
        session_key TEXT NOT NULL,
        channel TEXT NOT NULL,
        tool TEXT NOT NULL,
        args TEXT NOT NULL,
        reason TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        decided_by TEXT,
        decided_at INTEGER,
        message_ref TEXT
      );
      CREATE UNIQUE INDEX approvals_call ON approvals(call_id);
      CREATE INDEX approvals_status ON approvals(status, expires_at);
    `,
  },
  {
    version: 4,
    name: "memories and token calibration",
    sql: `
      CREATE TABLE memories (
        id INTEGER PRIMARY KEY,
        fact TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        forgotten_at INTEGER
      );
      CREATE TABLE token_calibration (
        model TEXT PRIMARY KEY,
        ratio REAL NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: "inbound updates and small state",
    sql: `
      CREATE TABLE inbound_updates (
        connector TEXT NOT NULL,
        update_id INTEGER NOT NULL,
        chat TEXT,
        payload TEXT NOT NULL,
        status TEXT NOT NULL,
        run_id TEXT,
        received_at INTEGER NOT NULL,
        PRIMARY KEY (connector, update_id)
      );
      CREATE TABLE kv (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 6,
    name: "schedules: firings, reminders, per-run tool subsets",
    sql: `
      ALTER TABLE runs ADD COLUMN tools TEXT;
      CREATE TABLE firings (
        id INTEGER PRIMARY KEY,
        job TEXT NOT NULL,
        slot_at INTEGER NOT NULL,
        fired_at INTEGER NOT NULL,
        run_id TEXT,
        status TEXT NOT NULL,
        message_id TEXT,
        error TEXT,
        UNIQUE (job, slot_at)
      );
      CREATE TABLE reminders (
        id INTEGER PRIMARY KEY,
        channel TEXT NOT NULL,
        text TEXT NOT NULL,
        at INTEGER,
        cron TEXT,
        timezone TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        cancelled_at INTEGER,
        done_at INTEGER
      );
    `,
  },
  {
    version: 7,
    name: "index messages by run",
    sql: "CREATE INDEX messages_run ON messages(run_id);",
  },
  {
    version: 8,
    name: "runs are recorded when queued, and resumed after a crash",
    sql: `
      ALTER TABLE runs ADD COLUMN input TEXT;
      ALTER TABLE runs ADD COLUMN channel TEXT;
      ALTER TABLE runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 9,
    name: "a chat reply is marked sent, so one lost to a crash is sent after the restart",
    sql: `
      ALTER TABLE runs ADD COLUMN reply_sent_at INTEGER;
      UPDATE runs SET reply_sent_at = ended_at WHERE ended_at IS NOT NULL;
      CREATE INDEX runs_reply_unsent ON runs (ended_at)
        WHERE reply_sent_at IS NULL AND ended_at IS NOT NULL AND source IN ('telegram', 'discord');
    `,
  },
  {
    version: 10,
    name: "usage ledger: one row per model call",
    sql: `
      CREATE TABLE model_calls (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        run_id TEXT,
        session_id INTEGER,
        step INTEGER,
        endpoint TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cached_tokens INTEGER,
        estimated INTEGER NOT NULL DEFAULT 0,
        first_byte_ms INTEGER,
        total_ms INTEGER NOT NULL,
        outcome TEXT NOT NULL
      );
      CREATE INDEX model_calls_at ON model_calls(at);
      CREATE INDEX model_calls_run ON model_calls(run_id);
    `,
  },
  {
    version: 11,
    name: "running summaries of sessions, who sent each run, whose memory each fact is",
    sql: `
      CREATE TABLE summaries (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id),
        summary TEXT NOT NULL,
        from_message_id INTEGER NOT NULL,
        to_message_id INTEGER NOT NULL,
        turns INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX summaries_session ON summaries(session_id, id);
      ALTER TABLE runs ADD COLUMN sender_id TEXT;
      ALTER TABLE runs ADD COLUMN sender_name TEXT;
      ALTER TABLE memories ADD COLUMN owner TEXT;
      ALTER TABLE memories ADD COLUMN owner_name TEXT;
    `,
  },
  {
    version: 12,
    name: "images a message carried: files under the data directory, referenced, never inlined",
    sql: `
      ALTER TABLE runs ADD COLUMN images TEXT;
      ALTER TABLE messages ADD COLUMN images TEXT;
    `,
  },
  {
    version: 13,
    name: "the last tool list of each MCP server, so its tools exist from the start while it connects",
    sql: `
      CREATE TABLE mcp_tool_lists (
        server TEXT PRIMARY KEY,
        tools TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 14,
    name: "recall: a full-text index of stored messages, and runs by sender for whose chats a person may search",
    sql: `
      CREATE VIRTUAL TABLE recall_index USING fts5(text, tokenize = 'unicode61 remove_diacritics 2', columnsize = 0);
      CREATE INDEX runs_sender ON runs(sender_id, session_id);
    `,
    data: fillRecallIndex,
  },
  {
    version: 15,
    name: "connector plugins: the message ids each has handed over (exactly once across restarts) and its small persisted values",
    sql: `
      CREATE TABLE plugin_inbound (
        connector TEXT NOT NULL,
        message_id TEXT NOT NULL,
        received_at INTEGER NOT NULL,
        PRIMARY KEY (connector, message_id)
      );
      CREATE TABLE plugin_state (
        connector TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (connector, key)
      );
    `,
  },
  {
    version: 16,
    name: "recall: index leaves of 1,000 bytes instead of FTS5's 4,050, so a message's index write dirties fewer database pages",
    // An FTS5 option lives in the table's own config rows: set once, it holds for every later write; leaves
    // already written keep their size and are read as before.
    sql: "INSERT INTO recall_index (recall_index, rank) VALUES ('pgsz', 1000);",
  },
  {
    version: 17,
    name: "recall: the index reads its text from the messages (external content) instead of keeping a copy of each, a smaller write per message",
    // recall_text() is indexedText() (recall-text.ts), registered by RecallStore on every connection that
    // reads snippets (the view is read only then). The index is rebuilt from the messages: the old one's
    // copies go with it.
    sql: `
      DROP TABLE recall_index;
      CREATE VIEW recall_source AS SELECT id, recall_text(role, content, tool_name) AS text FROM messages;
      CREATE VIRTUAL TABLE recall_index USING fts5(text, tokenize = 'unicode61 remove_diacritics 2', columnsize = 0,
        content = 'recall_source', content_rowid = 'id');
      INSERT INTO recall_index (recall_index, rank) VALUES ('pgsz', 1000);
    `,
    data: fillRecallIndex,
  },
  {
    version: 18,
    name: "inbound updates keep their payload only until handled: a done update is its id, not a second copy of everyone's message",
    sql: "UPDATE inbound_updates SET payload = '{}' WHERE status = 'done' AND payload <> '{}';",
  },
  {
    version: 19,
    name: "recall: a chat's /<skill> message is indexed with the person's words, without the skill's instructions",
    sql: "",
    data: reindexSkillMessages,
  },
  {
    version: 20,
    name: "recall: vowel signs and other marks are part of a word (Hindi, Tamil, Bengali …), not where one ends",
    // unicode61 keeps letters, digits and private-use characters in a word by default and splits on the
    // rest: a spacing vowel sign (Mc) ended the word, so "काम" (work) was indexed as "क" and "म", and a
    // search for it found "का मकान" (of the house). With the marks (M*) in words, Latin accents still fold
    // (remove_diacritics drops a combining accent too). The index is rebuilt from the messages.
    sql: RECALL_INDEX,
    data: fillRecallIndex,
  },
  {
    version: 21,
    name: "recall: full-width letters and digits and half-width katakana are indexed as the letters they are",
    // What a Japanese or Chinese keyboard types ("２０２４年", "ｉＰｈｏｎｅ", "ｶﾀｶﾅ") was indexed as is, and
    // unicode61 does not fold those forms: a search for "2024" found nothing. Those forms (U+FF01–U+FFEE) are
    // folded in messages and queries now (only they: a snippet quotes the rest as written); the index is
    // rebuilt from the messages, as 20 did.
    sql: RECALL_INDEX,
    data: fillRecallIndex,
  },
  {
    version: 22,
    name: "runs keep the id of the message they answer: a reply sent after a restart threads under it, as a live one does",
    sql: "ALTER TABLE runs ADD COLUMN reply_to TEXT;",
  },
  {
    version: 23,
    name: "a message delivered into a session (the CLI keeps them) says whether it is the owner's own words (a reminder)",
    // A job's or a hook's reply delivered there is outside text (a later note or fact asks first); a reminder is
    // not. Messages delivered before this have no mark and count as outside text.
    sql: "ALTER TABLE messages ADD COLUMN delivered TEXT;",
  },
];
