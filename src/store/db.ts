import { dirname } from "node:path";
import Database from "better-sqlite3";
import { MIGRATIONS } from "./migrations.js";
import { privateDatabase, privateDir } from "./private.js";

export type Db = Database.Database;

/**
 * SQLite's page cache, in KiB. better-sqlite3 builds SQLite with 16 MiB, which the daemon's RSS grew
 * into over ~15,000 turns; the pages a turn touches (recent history, the open run) fit in far less,
 * and the rest is a read from the OS's file cache away.
 */
const PAGE_CACHE_KIB = 4096;

/**
 * Opens (creating if needed) the SQLite database in WAL mode and applies pending migrations.
 * synchronous=NORMAL in WAL mode keeps every committed row across a process crash (SIGKILL);
 * only an OS crash or power cut may lose the last transactions, never consistency.
 */
export function openDatabase(path: string, options: { busyTimeoutMs?: number } = {}): Db {
  if (path !== ":memory:") {
    privateDir(dirname(path));
    privateDatabase(path);
  }
  const db = new Database(path, { timeout: options.busyTimeoutMs ?? 5000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  migrate(db);
  return db;
}

export function migrate(db: Db): number {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
  const applied = new Set(db.prepare("SELECT version FROM schema_migrations").pluck().all() as number[]);
  const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
  const pending = MIGRATIONS.filter((m) => !applied.has(m.version));
  db.transaction(() => {
    for (const m of pending) {
      db.exec(m.sql);
      m.data?.(db);
      record.run(m.version, m.name, Date.now());
    }
  })();
  return pending.length;
}
