import {
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import Database from "better-sqlite3";
import type { Logger } from "pino";
import { zonedCron } from "../time.js";
import { type Db, newerSchema } from "./db.js";
import { privateDir, privateFile, privateNewFile } from "./private.js";

export interface BackupResult {
  path: string;
  bytes: number;
  ms: number;
}

/** What `storage.backup` configures. */
export interface BackupSettings {
  schedule?: string;
  keep: number;
  dir: string;
}

/** `storage.backup`, or for a backup asked for without it: the newest 7 kept in `backups/` beside the database. */
export function backupSettings(storage: { path: string; backup?: BackupSettings }): BackupSettings {
  return storage.backup ?? { keep: 7, dir: join(dirname(storage.path), "backups") };
}

/** The one line that reports a backup that was made. */
export function describeBackup(done: BackupResult): string {
  return `backup written to ${done.path} (${done.bytes} bytes, integrity_check ok, ${done.ms} ms)`;
}

const NAME = /^hermes-\d{8}-\d{6}(-\d+)?\.db$/;

/**
 * A consistent copy of the live database, made with SQLite's online backup on the daemon's own connection
 * (so writes during the copy are carried into it instead of restarting it), checked before it is kept.
 */
export async function backupDatabase(db: Db, dest: string): Promise<BackupResult> {
  const started = performance.now();
  const partial = `${dest}.partial`;
  if (isDatabaseFile([dest, partial], db.name))
    throw new Error(`${dest} is a file of the database hermes uses (${db.name}); a backup goes elsewhere`);
  const there = lstatSync(dest, { throwIfNoEntry: false });
  if (there?.isDirectory()) throw new Error(`${dest} is a folder; give the path of the backup file`);
  if (there && !isHermesBackup(dest)) throw new Error(`${dest} exists and is not a hermes backup; it is left as it is`);
  privateDir(dirname(dest));
  rmSync(partial, { force: true });
  try {
    // Made 0600 before SQLite writes into it: a backup holds everything the database does.
    privateFile(partial);
    await db.backup(partial);
    selfContained(partial);
    checkDatabase(partial);
    renameSync(partial, dest);
  } finally {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(partial + suffix, { force: true });
  }
  return { path: dest, bytes: statSync(dest).size, ms: Math.round(performance.now() - started) };
}

/** The copy keeps the source's WAL mode; one file without a WAL beside it is what a backup should be. */
function selfContained(path: string): void {
  const copy = new Database(path, { fileMustExist: true });
  try {
    copy.pragma("journal_mode = DELETE");
  } finally {
    copy.close();
  }
}

/** Throws unless `path` is a hermes database that passes SQLite's integrity_check. */
export function checkDatabase(path: string): void {
  if (!existsSync(path)) throw new Error(`${path} does not exist`);
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new Error(`${path} is not a SQLite database: ${(err as Error).message}`);
  }
  try {
    const result = db.pragma("integrity_check", { simple: true }) as string;
    if (result !== "ok") throw new Error(`${path} failed integrity_check: ${result}`);
    if (!hasHermesTables(db)) throw new Error(`${path} is a SQLite database, but not one of hermes`);
    const newer = newerSchema(db);
    if (newer) throw new Error(`${path} was ${newer}`);
  } catch (err) {
    if ((err as Error).message.startsWith(path)) throw err;
    throw new Error(`${path} is not a readable SQLite database: ${(err as Error).message}`);
  } finally {
    db.close();
  }
}

/** True when `db` holds hermes's tables: a database hermes has set up (at its first start). */
export function hasHermesTables(db: Database.Database): boolean {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('sessions', 'messages', 'schema_migrations')")
    .all();
  return tables.length === 3;
}

/**
 * Whether `path` is a backup hermes made, and so one a new backup may replace: a SQLite database with
 * hermes' tables, in rollback-journal mode (header bytes 18 and 19 are 1). Backups are made so (see
 * `selfContained`); a database hermes runs on is in WAL mode (2), whichever hermes it belongs to.
 */
export function isHermesBackup(path: string): boolean {
  const header = Buffer.alloc(100);
  try {
    const fd = openSync(path, "r");
    try {
      if (readSync(fd, header, 0, header.length, 0) < header.length) return false;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
  if (header.toString("latin1", 0, 16) !== "SQLite format 3\0" || header[18] !== 1 || header[19] !== 1) return false;
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      return hasHermesTables(db);
    } finally {
      db.close();
    }
  } catch {
    return false;
  }
}

/** The database's own file and those SQLite keeps beside it. */
const DATABASE_FILES = ["", "-wal", "-shm", "-journal"];

/**
 * Whether writing `paths` (or SQLite's files beside them) would write one of the files of the database at
 * `database`. Compared as real paths: symlinks are resolved as far as each path exists.
 */
export function isDatabaseFile(paths: string[], database: string): boolean {
  const live = new Set(DATABASE_FILES.map((suffix) => realPath(database + suffix)));
  return paths.some((path) => DATABASE_FILES.some((suffix) => live.has(realPath(path + suffix))));
}

/** `path` with every symlink resolved: the file's when it exists, else its nearest existing folder's plus the rest. */
function realPath(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(realPath(parent), basename(absolute));
  }
}

/**
 * Puts a checked backup in place of the database at `target` (the daemon must be stopped). The replaced
 * database, with its WAL, is kept aside under `<target>.replaced-<time>`; returns that path.
 */
export function restoreDatabase(backup: string, target: string, now = new Date()): { aside?: string } {
  if (isDatabaseFile([backup], target)) throw new Error(`${backup} is a file of the database it would replace (${target})`);
  // Only the main file is copied: what a write-ahead log beside it holds would be lost without a word.
  if ((statSync(`${backup}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0)
    throw new Error(
      `${backup} has a write-ahead log beside it (${backup}-wal): it is a database in use, or one left by a crash, not a backup; make a backup of it with \`hermes backup\` (or open it once with sqlite3) and restore that`,
    );
  checkDatabase(backup);
  privateDir(dirname(target));
  const incoming = `${target}.restoring`;
  // Made afresh, never written through what is there (a link left in the folder could name any file).
  rmSync(incoming, { force: true });
  copyFileSync(backup, incoming, constants.COPYFILE_EXCL);
  privateNewFile(incoming);
  let aside: string | undefined;
  if (existsSync(target)) {
    // A second restore within the same second must not put its aside copy over the first one's (the
    // database as it was before either).
    aside = `${target}.replaced-${stamp(now)}`;
    for (let n = 2; existsSync(aside) || existsSync(`${aside}-wal`); n++) aside = `${target}.replaced-${stamp(now)}-${n}`;
    renameSync(target, aside);
  }
  // A journal left beside the old database would be played into the restored one at its first open.
  for (const suffix of ["-wal", "-shm", "-journal"]) {
    if (!existsSync(target + suffix)) continue;
    if (aside) renameSync(target + suffix, aside + suffix);
    else rmSync(target + suffix);
  }
  renameSync(incoming, target);
  return { aside };
}

/** `hermes-YYYYMMDD-HHMMSS.db` in UTC: names sort in time order. */
export function backupFileName(now: Date): string {
  return `hermes-${stamp(now)}.db`;
}

function stamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}

/** A backup's name as its time and its number within that second (0 for the first). */
function sortKey(name: string): { stamp: string; n: number } {
  const [, stamp = "", n] = /^hermes-(\d{8}-\d{6})(?:-(\d+))?\.db$/.exec(name) ?? [];
  return { stamp, n: n ? Number(n) : 0 };
}

/** Deletes all but the newest `keep` backups hermes named in `dir`; returns the deleted paths. */
export function pruneBackups(dir: string, keep: number): string[] {
  if (!existsSync(dir)) return [];
  // In time order: two backups of one second are `hermes-…-HHMMSS.db` and then `…-HHMMSS-1.db`, which a
  // plain sort put first (so the newer was the one deleted).
  const ours = readdirSync(dir)
    .filter((f) => NAME.test(f))
    .sort((a, b) => {
      const [sa, sb] = [sortKey(a), sortKey(b)];
      return sa.stamp < sb.stamp ? -1 : sa.stamp > sb.stamp ? 1 : sa.n - sb.n;
    });
  const old = ours.slice(0, Math.max(0, ours.length - keep)).map((f) => join(dir, f));
  for (const path of old) rmSync(path, { force: true });
  return old;
}

/** A backup into `dir` now, then the oldest beyond `keep` deleted. */
export async function backupInto(db: Db, settings: BackupSettings, now = new Date()): Promise<BackupResult & { pruned: string[] }> {
  let dest = join(settings.dir, backupFileName(now));
  for (let n = 1; existsSync(dest); n++) dest = join(settings.dir, backupFileName(now).replace(".db", `-${n}.db`));
  const result = await backupDatabase(db, dest);
  return { ...result, pruned: pruneBackups(settings.dir, settings.keep) };
}

/** Runs `storage.backup` on its cron schedule; a failed backup is logged and tried again at the next slot. */
export function scheduleBackups(db: Db, settings: BackupSettings, timezone: string, log: Logger): { stop(): void } {
  if (!settings.schedule) return { stop() {} };
  const job = zonedCron(settings.schedule, timezone, { protect: true }, async () => {
    try {
      const done = await backupInto(db, settings);
      log.info({ path: done.path, bytes: done.bytes, ms: done.ms, pruned: done.pruned.map((p) => basename(p)) }, "backup made");
    } catch (err) {
      log.error({ err, dir: settings.dir }, "the scheduled backup failed");
    }
  });
  return { stop: () => job.stop() };
}
