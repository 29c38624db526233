// node:fs/promises is reached through fs.promises at the first call, not loaded with the tools at start.
import { constants, promises as fsp, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { ToolError } from "../src/errors.js";
import { randomBytes } from "../src/random.js";

const MAX_LIST_ENTRIES = 500;
/** On Linux a path below /proc/self/fd/<n> is resolved from the directory that descriptor holds: openat. */
const PROC_FD = process.platform === "linux" ? "/proc/self/fd" : undefined;
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;

/** A folder opened during a walk: its descriptor and the path shown in messages. */
interface Dir {
  handle: FileHandle;
  /** The real path it was reached by (used where there is no /proc, and never for the check itself on Linux). */
  path: string;
  shown: string;
}

/**
 * The files folder as a directory handle. Every model-given path is opened one component at a time, each
 * relative to the handle of the folder before it and without following a link at any component, so a
 * folder swapped for a symlink between a check and an open leads nowhere: there is no check to race. A
 * file with more than one hard link is refused too: hermes cannot tell where its other names are, and a
 * link to a file outside the folder would otherwise hand that file out. FIFOs, sockets and devices are
 * refused, and are opened without blocking so that a FIFO with no writer cannot hang a call.
 */
export function createJail(root: string) {
  let realRoot: Promise<string> | undefined;
  const base = () => {
    realRoot ??= fsp.mkdir(root, { recursive: true }).then(() => fsp.realpath(root));
    return realRoot;
  };

  /** Opens the folder at `parts` below the root, creating missing folders when `create` is set. */
  async function walk(parts: string[], shownPath: string, opened: FileHandle[], create: boolean): Promise<Dir> {
    const rootPath = await base();
    let dir: Dir = { handle: await openDir(rootPath, "."), path: rootPath, shown: "." };
    opened.push(dir.handle);
    for (const [i, part] of parts.entries()) {
      const shown = parts.slice(0, i + 1).join("/");
      const target = childPath(dir, part);
      if (create) await fsp.mkdir(target).catch((err: NodeJS.ErrnoException) => (err.code === "EEXIST" ? undefined : Promise.reject(err)));
      const handle = await openDir(target, shown, shownPath);
      opened.push(handle);
      dir = { handle, path: join(dir.path, part), shown };
    }
    return dir;
  }

  async function openDir(path: string, shown: string, whole = shown): Promise<FileHandle> {
    return fsp.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW).catch(async (err: NodeJS.ErrnoException) => {
      // Linux answers ENOTDIR for a link opened with O_DIRECTORY | O_NOFOLLOW: say which it was.
      const link =
        err.code === "ENOTDIR" &&
        (await fsp.lstat(path).then(
          (s) => s.isSymbolicLink(),
          () => false,
        ));
      throw explain(link ? Object.assign(err, { code: "ELOOP" }) : err, shown, whole);
    });
  }

  /** Splits a model-given path into its components, refusing what can never lie inside the folder. */
  function partsOf(path: string): string[] {
    if (isAbsolute(path) || /^[a-zA-Z]:[\\/]/.test(path)) throw new ToolError(`'${path}' is absolute; give a path inside the files folder`);
    if (path.split(/[\\/]/).includes("..")) throw new ToolError(`'${path}' contains '..'; paths must stay inside the files folder`);
    if (path.includes("\0")) throw new ToolError("the path contains a NUL character");
    return path.split(/[\\/]/).filter((p) => p !== "" && p !== ".");
  }

  async function withOpened<T>(use: (opened: FileHandle[]) => Promise<T>): Promise<T> {
    const opened: FileHandle[] = [];
    try {
      return await use(opened);
    } finally {
      await Promise.all(opened.map((h) => h.close().catch(() => {})));
    }
  }

  return {
    async read(path: string, maxBytes: number): Promise<string> {
      const parts = partsOf(path);
      const name = parts.pop();
      if (!name) throw new ToolError("that is a folder; use list_files");
      return withOpened(async (opened) => {
        const dir = await walk(parts, path, opened, false);
        const handle = await fsp.open(childPath(dir, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK).catch((err: NodeJS.ErrnoException) => {
          throw explain(err, path, path);
        });
        opened.push(handle);
        const info = await handle.stat();
        if (info.isDirectory()) throw new ToolError("that is a folder; use list_files");
        checkRegular(info, path);
        const length = Math.min(info.size, maxBytes);
        const buffer = Buffer.alloc(length);
        const { bytesRead } = await handle.read(buffer, 0, length, 0);
        const bytes = buffer.subarray(0, bytesRead);
        if (bytes.includes(0)) throw new ToolError("that file is binary; only text files can be read");
        // A cut file ends where a character of several bytes may begin: that character is left out whole
        // rather than shown as "\uFFFD".
        const shown = bytesRead < info.size ? bytes.subarray(0, wholeCharsEnd(bytes)) : bytes;
        const text = shown.toString("utf8");
        return info.size > maxBytes ? `${text}\n[… file cut: showed ${shown.length} of ${info.size} bytes]` : text;
      });
    },

    async list(path: string): Promise<string> {
      const parts = partsOf(path);
      return withOpened(async (opened) => {
        const last = parts.pop();
        let dir = await walk(parts, path, opened, false);
        if (last !== undefined) {
          const target = childPath(dir, last);
          const info = await fsp.lstat(target).catch((err: NodeJS.ErrnoException) => {
            throw explain(err, path, path);
          });
          if (info.isFile()) return `${path} is a file of ${info.size} bytes`;
          const handle = await openDir(target, path);
          opened.push(handle);
          dir = { handle, path: join(dir.path, last), shown: path };
        }
        return listDir(dir, path);
      });
    },

    async write(path: string, content: string): Promise<string> {
      const parts = partsOf(path);
      const name = parts.pop();
      if (!name) throw new ToolError(`'${path}' is a folder`);
      return withOpened(async (opened) => {
        const dir = await walk(parts, path, opened, true);
        const target = childPath(dir, name);
        const existing = await fsp.lstat(target).catch((err: NodeJS.ErrnoException) => {
          if (err.code === "ENOENT") return undefined;
          throw explain(err, path, path);
        });
        if (existing) {
          if (existing.isSymbolicLink()) throw new ToolError(`'${path}' is a symbolic link; hermes does not write through links`);
          if (existing.isDirectory()) throw new ToolError(`'${path}' is a folder`);
          checkRegular(existing, path);
          // A file the owner made read-only stays as it is: the rename below would replace it regardless.
          if ((existing.mode & 0o222) === 0) throw new ToolError(`'${path}' is read-only; hermes leaves it as it is`);
          await fsp.access(target, constants.W_OK).catch((err: NodeJS.ErrnoException) => Promise.reject(explain(err, path, path)));
        }
        // The text goes to a new file beside it that then takes its name: a reader, or another write, never
        // meets half a file, and a write that fails leaves the old one. A link or a hard link put in the
        // file's place meanwhile is replaced, never written through.
        if (!(await replaceWhole(dir, name, path, existing, content, opened))) await writeInPlace(target, path, content, opened);
        return `Wrote ${Buffer.byteLength(content)} bytes to ${path}.`;
      });
    },
  };
}

/** Names of write_file's new files while they are written: not listed. */
const TEMP_PREFIX = ".hermes-write-";

/**
 * Writes `content` to a new file in `dir` and renames it over `target`. False, with nothing changed, where
 * the replacement could not be what the file was: a folder hermes may not add to (the file in it it may
 * write), or a file of another owner (the new one would be hermes's, and its owner might no longer write it).
 */
async function replaceWhole(
  dir: Dir,
  name: string,
  path: string,
  existing: Stats | undefined,
  content: string,
  opened: FileHandle[],
): Promise<boolean> {
  const temp = childPath(dir, `${TEMP_PREFIX}${randomBytes(8).toString("hex")}`);
  const handle = await fsp.open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644).catch((err: NodeJS.ErrnoException) => {
    if (existing && (err.code === "EACCES" || err.code === "EPERM")) return undefined;
    throw err;
  });
  if (!handle) return false;
  opened.push(handle);
  try {
    if (existing) {
      const owned = await handle.chown(existing.uid, existing.gid).then(
        () => true,
        () => false,
      );
      if (!owned) {
        await fsp.unlink(temp).catch(() => {});
        return false;
      }
      await handle.chmod(existing.mode & 0o777);
    }
    await handle.writeFile(content, "utf8");
    await handle.datasync();
    await fsp.rename(temp, childPath(dir, name));
    return true;
  } catch (err) {
    await fsp.unlink(temp).catch(() => {});
    if ((err as NodeJS.ErrnoException).code === "EISDIR") throw new ToolError(`'${path}' is a folder`);
    throw err;
  }
}

/** The file itself rewritten, as before replacing was possible; no O_TRUNC: a file that turned into a hard link or a FIFO stays as it was. */
async function writeInPlace(target: string, path: string, content: string, opened: FileHandle[]): Promise<void> {
  const handle = await fsp.open(target, O_WRONLY | O_NOFOLLOW | O_NONBLOCK).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ELOOP") throw new ToolError(`'${path}' is a symbolic link; hermes does not write through links`);
    throw explain(err, path, path);
  });
  opened.push(handle);
  checkRegular(await handle.stat(), path);
  await handle.truncate(0);
  await handle.writeFile(content, "utf8");
}

/** The path that opens `name` inside `dir`: through the descriptor on Linux, by the real path elsewhere. */
function childPath(dir: Dir, name: string): string {
  return pathInFolder(dir.handle, dir.path, name);
}

/**
 * The path that opens `name` inside the folder open as `folder` (reached by `path`): through its descriptor
 * on Linux, so a link put in the folder's place since it was opened leads nowhere; by the path elsewhere.
 */
export function pathInFolder(folder: FileHandle, path: string, name: string): string {
  return PROC_FD ? `${PROC_FD}/${folder.fd}/${name}` : join(path, name);
}

function checkRegular(info: Stats, path: string): void {
  if (!info.isFile())
    throw new ToolError(`'${path}' is not a regular file (a FIFO, socket or device); the file tools use regular files only`);
  if (info.nlink > 1) {
    throw new ToolError(
      `'${path}' has ${info.nlink} hard links; hermes uses only files with a single name, so a link to a file outside the folder cannot be used`,
    );
  }
}

function explain(err: NodeJS.ErrnoException, part: string, whole: string): Error {
  switch (err.code) {
    case "ENOENT":
      return new ToolError(`'${whole}' does not exist`);
    case "ELOOP":
      return new ToolError(
        `'${whole}' goes through the link '${part}'; the file tools do not follow links, so nothing outside the files folder can be reached`,
      );
    case "ENOTDIR":
      return new ToolError(`'${part}' is not a folder`);
    case "ENXIO":
    case "ENODEV":
      return new ToolError(`'${whole}' is not a regular file (a FIFO, socket or device); the file tools use regular files only`);
    default:
      return err;
  }
}

async function listDir(dir: Dir, shown: string): Promise<string> {
  const at = PROC_FD ? `${PROC_FD}/${dir.handle.fd}` : dir.path;
  // A write's new file (or one left by a crash mid-write) is no file of the folder's.
  const entries = (await fsp.readdir(at, { withFileTypes: true })).filter((e) => !e.name.startsWith(TEMP_PREFIX));
  entries.sort((a, b) => a.name.localeCompare(b.name));
  const lines = await Promise.all(
    entries.slice(0, MAX_LIST_ENTRIES).map(async (e) => {
      if (e.isDirectory()) return `${e.name}/`;
      if (e.isSymbolicLink()) return `${e.name} (link)`;
      if (!e.isFile()) return `${e.name} (not a regular file)`;
      const size = await fsp.lstat(`${at}/${e.name}`).then(
        (s) => s.size,
        () => undefined,
      );
      return size === undefined ? e.name : `${e.name} (${size} bytes)`;
    }),
  );
  if (lines.length === 0) return `${shown} is empty`;
  const more = entries.length > MAX_LIST_ENTRIES ? `\n[… ${entries.length - MAX_LIST_ENTRIES} more entries]` : "";
  return lines.join("\n") + more;
}

/** Where `bytes` ends without a UTF-8 character cut in two: before a lead byte whose continuation bytes are missing. */
function wholeCharsEnd(bytes: Buffer): number {
  // Back over at most three continuation bytes (10xxxxxx) to the character's lead byte.
  let at = bytes.length - 1;
  while (at > 0 && bytes.length - at < 4 && ((bytes[at] as number) & 0xc0) === 0x80) at--;
  const lead = bytes[at] as number;
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return at + size > bytes.length ? at : bytes.length;
}
