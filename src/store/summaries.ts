import type { Db } from "./db.js";

/** A session's running summary: what the model made of its messages up to `to_message_id`. */
export interface SummaryRow {
  id: number;
  session_id: number;
  summary: string;
  /** The first and last message (row ids) the summary covers; every earlier summary is folded into it. */
  from_message_id: number;
  to_message_id: number;
  /** User turns the summary covers. */
  turns: number;
  created_at: number;
}

/** Summaries are appended, never edited: the newest row of a session is its running summary. */
export class SummaryStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      latest: db.prepare("SELECT * FROM summaries WHERE session_id = ? ORDER BY id DESC LIMIT 1"),
      all: db.prepare("SELECT * FROM summaries WHERE session_id = ? ORDER BY id"),
      insert: db.prepare(
        "INSERT INTO summaries (session_id, summary, from_message_id, to_message_id, turns, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *",
      ),
    };
  }

  latest(sessionId: number): SummaryRow | undefined {
    return this.q.latest.get(sessionId) as SummaryRow | undefined;
  }

  /** Every compaction of a session, oldest first. */
  of(sessionId: number): SummaryRow[] {
    return this.q.all.all(sessionId) as SummaryRow[];
  }

  add(row: Omit<SummaryRow, "id" | "created_at">): SummaryRow {
    return this.q.insert.get(row.session_id, row.summary, row.from_message_id, row.to_message_id, row.turns, Date.now()) as SummaryRow;
  }
}
