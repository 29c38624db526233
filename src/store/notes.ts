import type { Db } from "./db.js";
import { statements } from "./statements.js";

export interface Note {
  id: number;
  text: string;
  created_at: number;
}

/** The owner's notes, soft-deleted so the audit trail can still explain what happened. */
export class NotesStore {
  private readonly q;

  constructor(db: Db) {
    this.q = statements(db, {
      add: () => db.prepare("INSERT INTO notes (text, created_at) VALUES (?, ?) RETURNING id, text, created_at"),
      list: () => db.prepare("SELECT id, text, created_at FROM notes WHERE deleted_at IS NULL ORDER BY id LIMIT ?"),
      search: () =>
        db.prepare("SELECT id, text, created_at FROM notes WHERE deleted_at IS NULL AND text LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?"),
      remove: () => db.prepare("UPDATE notes SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL"),
    });
  }

  add(text: string): Note {
    return this.q.add.get(text, Date.now()) as Note;
  }

  list(limit = 100): Note[] {
    return this.q.list.all(limit) as Note[];
  }

  search(query: string, limit = 50): Note[] {
    const escaped = query.replace(/[\\%_]/g, (c) => `\\${c}`);
    return this.q.search.all(`%${escaped}%`, limit) as Note[];
  }

  /** Returns false when no such note exists (or it was already deleted). */
  remove(id: number): boolean {
    return this.q.remove.run(Date.now(), id).changes > 0;
  }
}
