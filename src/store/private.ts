import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

/**
 * hermes keeps conversations, facts and tokens' traces in its data folder: only its own user may read
 * them, whatever the umask of the shell that started it. These set exact modes (chmod after create), since
 * a mode given to mkdir or open is only ever narrowed by the umask, never kept as asked.
 */

/**
 * Creates `dir` (and missing parents) 0700; a folder that exists already is left as its owner set it.
 * One level at a time: Node's recursive mkdir never returns where mkdir fails with ENOENT under a folder
 * that exists (as in /proc), and this way that failure is an error.
 */
export function privateDir(dir: string): void {
  const missing: string[] = [];
  for (let d = resolve(dir); !existsSync(d); d = dirname(d)) missing.unshift(d);
  for (const d of missing) {
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw err;
    }
    chmodSync(d, 0o700);
    ownedLikeFolder(d);
  }
}

/**
 * Makes sure `path` exists (empty when new) and is 0600, so SQLite (which creates 0644) opens it as it is;
 * made by root in another user's folder, it is that user's (see ownedLikeFolder).
 */
export function privateFile(path: string): void {
  closeSync(openSync(path, "a", 0o600));
  chmodSync(path, 0o600);
  ownedLikeFolder(path);
}

/**
 * Run as root (`sudo hermes restore`, `sudo hermes backup` beside a service's data), a file or folder made in
 * a folder of another user goes to that user: the service's database restored as root's was one the service
 * could not open, and a backups folder of root's failed every later backup the daemon made. SQLite does the
 * same for the WAL and shared-memory files it makes as root.
 */
function ownedLikeFolder(path: string): void {
  if (process.geteuid?.() !== 0) return;
  const folder = statSync(dirname(path));
  if (folder.uid !== 0) chownSync(path, folder.uid, folder.gid);
}

/**
 * A database and the WAL and shared-memory files beside it, 0600 (SQLite gives the latter the db's mode).
 * A database this user may not change (another user's, read through a group) is left to SQLite to open or
 * refuse with its own error.
 */
export function privateDatabase(path: string): void {
  try {
    privateFile(path);
    for (const suffix of ["-wal", "-shm"]) if (existsSync(path + suffix)) chmodSync(path + suffix, 0o600);
  } catch (err) {
    if (!["EACCES", "EPERM", "EROFS"].includes((err as NodeJS.ErrnoException).code ?? "")) throw err;
  }
}
