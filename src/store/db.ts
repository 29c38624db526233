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
  let db: Db | undefined;
  try {
    db = new Database(path, { timeout: options.busyTimeoutMs ?? 5000 });
    db.pragma("journal_mode = WAL");
  } catch (err) {
    db?.close();
    throw new Error(`${path}: ${(err as Error).message}${openHint((err as { code?: string }).code)}`, { cause: err });
  }
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  try {
    migrate(db);
  } catch (err) {
    db.close();
    throw err instanceof NewerSchema ? new Error(`${path}: ${err.message}`) : err;
  }
  return db;
}

/** What to do when the database file cannot be opened, by SQLite's error code. */
function openHint(code: string | undefined): string {
  if (code === "SQLITE_NOTADB")
    return " (it is not a SQLite database: move it away to start afresh, or put a backup in its place with `hermes restore`)";
  if (code === "SQLITE_CANTOPEN" || code === "SQLITE_READONLY")
    return " (the file and its folder must belong to the user hermes runs as: under systemd, `chown -R hermes:hermes` the data folder)";
  return "";
}

/** The highest schema version this build knows. */
export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/**
 * A database a newer hermes wrote (after a downgrade, or a backup of a newer one restored): this build does
 * not know what its later migrations changed, and uses it not.
 */
class NewerSchema extends Error {
  constructor(version: number) {
    super(
      `written by a newer hermes (database schema ${version}; this hermes knows up to ${SCHEMA_VERSION}): upgrade hermes again, or restore a backup this version made`,
    );
  }
}

/** Why a database cannot be used by this build (see NewerSchema), or undefined when it can. */
export function newerSchema(db: Db): string | undefined {
  const known = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!known) return undefined;
  const version = db.prepare("SELECT MAX(version) FROM schema_migrations").pluck().get() as number | null;
  return version !== null && version > SCHEMA_VERSION ? new NewerSchema(version).message : undefined;
}

export function migrate(db: Db): number {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
  const applied = new Set(db.prepare("SELECT version FROM schema_migrations").pluck().all() as number[]);
  const newest = Math.max(0, ...applied);
  if (newest > SCHEMA_VERSION) throw new NewerSchema(newest);
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
