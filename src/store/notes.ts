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
    // SQLite's LIKE folds the case of ASCII letters only: "über" missed "Über", and "café" typed as e + accent
    // (as macOS sends it) missed the one a phone typed.
    db.function("note_fold", { deterministic: true }, (text) => (typeof text === "string" ? foldText(text) : null));
    this.q = statements(db, {
      add: () => db.prepare("INSERT INTO notes (text, created_at) VALUES (?, ?) RETURNING id, text, created_at"),
      // The newest `limit` that contain a text ('' for all), oldest of them first: a list cut at the oldest
      // left out the note just added.
      search: () =>
        db.prepare(
          "SELECT * FROM (SELECT id, text, created_at FROM notes WHERE deleted_at IS NULL AND instr(note_fold(text), ?) > 0 ORDER BY id DESC LIMIT ?) ORDER BY id",
        ),
      countMatching: () => db.prepare("SELECT COUNT(*) FROM notes WHERE deleted_at IS NULL AND instr(note_fold(text), ?) > 0").pluck(),
      remove: () => db.prepare("UPDATE notes SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL"),
    });
  }

  add(text: string): Note {
    return this.q.add.get(text, Date.now()) as Note;
  }

  /** The newest `limit` notes, oldest first. */
  list(limit = 100): Note[] {
    return this.search("", limit);
  }

  count(): number {
    return this.countMatching("");
  }

  /** The newest `limit` notes that contain `query`, oldest first. */
  search(query: string, limit = 50): Note[] {
    return this.q.search.all(foldText(query), limit) as Note[];
  }

  /** How many notes contain `query` (all for ''). */
  countMatching(query: string): number {
    return this.q.countMatching.get(foldText(query)) as number;
  }

  /** Returns false when no such note exists (or it was already deleted). */
  remove(id: number): boolean {
    return this.q.remove.run(Date.now(), id).changes > 0;
  }
}

/** Text as a search compares it: one Unicode form, lower case (every script's). */
function foldText(text: string): string {
  return text.normalize("NFC").toLowerCase();
}
