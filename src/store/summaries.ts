import type { Db } from "./db.js";
import { statements } from "./statements.js";

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

/** Sessions whose running summary is kept in memory (every model call asks for it). */
const CACHED_SESSIONS = 200;

/** Summaries are appended, never edited: the newest row of a session is its running summary. */
export class SummaryStore {
  private readonly q;
  private readonly cache = new Map<number, SummaryRow | null>();

  constructor(db: Db) {
    this.q = statements(db, {
      latest: () => db.prepare("SELECT * FROM summaries WHERE session_id = ? ORDER BY id DESC LIMIT 1"),
      all: () => db.prepare("SELECT * FROM summaries WHERE session_id = ? ORDER BY id"),
      insert: () =>
        db.prepare(
          "INSERT INTO summaries (session_id, summary, from_message_id, to_message_id, turns, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *",
        ),
    });
  }

  latest(sessionId: number): SummaryRow | undefined {
    let row = this.cache.get(sessionId);
    if (row === undefined) {
      row = (this.q.latest.get(sessionId) as SummaryRow | undefined) ?? null;
      this.remember(sessionId, row);
    }
    return row ?? undefined;
  }

  /** Every compaction of a session, oldest first. */
  of(sessionId: number): SummaryRow[] {
    return this.q.all.all(sessionId) as SummaryRow[];
  }

  add(row: Omit<SummaryRow, "id" | "created_at">): SummaryRow {
    const added = this.q.insert.get(
      row.session_id,
      row.summary,
      row.from_message_id,
      row.to_message_id,
      row.turns,
      Date.now(),
    ) as SummaryRow;
    this.remember(row.session_id, added);
    return added;
  }

  private remember(sessionId: number, row: SummaryRow | null): void {
    this.cache.delete(sessionId);
    this.cache.set(sessionId, row);
    if (this.cache.size > CACHED_SESSIONS) this.cache.delete(this.cache.keys().next().value as number);
  }
}
