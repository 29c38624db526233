import { chmodSync, closeSync, constants, existsSync, fchmodSync, fchownSync, lchownSync, mkdirSync, openSync, statSync } from "node:fs";
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
    // lchown: were the new folder swapped for a link meanwhile, the link changes owner, not what it names.
    const owner = foreignOwner(d);
    if (owner) lchownSync(d, owner.uid, owner.gid);
  }
}

/**
 * Makes sure `path` exists (empty when new) and is 0600, so SQLite (which creates 0644) opens it as it is.
 * Run as root in another user's folder, a file this call makes is that user's (see foreignOwner), and a
 * symbolic link there is not followed: it could name any file of root's.
 */
export function privateFile(path: string): void {
  const owner = foreignOwner(path);
  if (!owner) {
    closeSync(openSync(path, "a", 0o600));
    chmodSync(path, 0o600);
    return;
  }
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    restrict(openNoFollow(path)); // there already: its owner stays
    return;
  }
  restrict(fd, owner);
}

/**
 * A file just made by this process with exclusive create (a copy with COPYFILE_EXCL), made private the
 * same way: 0600, and the folder owner's when root made it in another user's folder.
 */
export function privateNewFile(path: string): void {
  restrict(openNoFollow(path), foreignOwner(path));
}

/** 0600 through the file's own descriptor, and `owner`'s when given; the descriptor is closed. */
function restrict(fd: number, owner?: { uid: number; gid: number }): void {
  try {
    fchmodSync(fd, 0o600);
    if (owner) fchownSync(fd, owner.uid, owner.gid);
  } finally {
    closeSync(fd);
  }
}

function openNoFollow(path: string): number {
  try {
    return openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ELOOP") throw err;
    throw new Error(`${path} is a symbolic link in a folder of another user: hermes run as root does not follow it`);
  }
}

/**
 * The owner of `path`'s folder when this process runs as root and the folder is another user's (`sudo
 * hermes restore`, `sudo hermes backup` beside a service's data): what root makes there goes to that user.
 * A database restored as root's was one the service could not open; a backups folder of root's failed every
 * later backup the daemon made. SQLite does the same for the WAL and shared-memory files it makes as root.
 */
function foreignOwner(path: string): { uid: number; gid: number } | undefined {
  if (process.geteuid?.() !== 0) return undefined;
  const folder = statSync(dirname(path));
  return folder.uid !== 0 ? { uid: folder.uid, gid: folder.gid } : undefined;
}

/**
 * A database and the WAL and shared-memory files beside it, 0600 (SQLite gives the latter the db's mode).
 * A database this user may not change (another user's, read through a group) is left to SQLite to open or
 * refuse with its own error.
 */
export function privateDatabase(path: string): void {
  try {
    privateFile(path);
    for (const suffix of ["-wal", "-shm"]) {
      const file = path + suffix;
      if (!existsSync(file)) continue;
      if (foreignOwner(file)) restrict(openNoFollow(file));
      else chmodSync(file, 0o600);
    }
  } catch (err) {
    if (!["EACCES", "EPERM", "EROFS"].includes((err as NodeJS.ErrnoException).code ?? "")) throw err;
  }
}
