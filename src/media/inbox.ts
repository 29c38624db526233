import { constants } from "node:fs";
import { mkdir, open } from "node:fs/promises";
import { extname, join } from "node:path";
import { pathInFolder } from "../../tools/files-jail.js";

/** Types read_file can show as text. */
const TEXT_TYPES = /^(text\/|application\/(json|xml|yaml|x-yaml|toml|csv|x-sh|javascript|x-ndjson|sql))/;
const TEXT_EXTENSIONS = new Set([
  ".txt",
  ".md",
  ".csv",
  ".json",
  ".yaml",
  ".yml",
  ".xml",
  ".log",
  ".ini",
  ".toml",
  ".ts",
  ".js",
  ".py",
  ".sh",
  ".html",
  ".ics",
]);

/** A file name that is safe on disk: no folders, no dot files, printable, at most 100 characters. */
export function safeName(name: string): string {
  const base = name.split(/[/\\]/).pop() ?? "";
  const cleaned = base
    .normalize("NFC")
    .replace(/[^\p{L}\p{N}._ -]/gu, "_")
    .replace(/^[.\s]+/, "")
    .trim();
  const ext = extname(cleaned).slice(0, 12);
  const stem = cleaned.slice(0, cleaned.length - ext.length).slice(0, 100 - ext.length);
  return stem ? `${stem}${ext}` : `file${ext}`;
}

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY } = constants;

/**
 * Saves a file into `<files root>/inbox/` under its safe name, or `name-2.ext`, `name-3.ext`, … when that
 * is taken (the file is created exclusively, so two arrivals never overwrite each other).
 * Returns the path relative to the files root, as the file tools take it.
 *
 * The inbox folder is opened without following a link, and each file is made in that open folder (on
 * Linux through /proc/self/fd, as the file tools do), so an inbox replaced by a symbolic link (the shell
 * tool or an MCP file server could do it) never leads a file out of the files folder.
 */
export async function saveToInbox(filesRoot: string, name: string, bytes: Buffer): Promise<string> {
  const dir = join(filesRoot, "inbox");
  await mkdir(dir, { recursive: true });
  const folder = await open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOTDIR" || err.code === "ELOOP")
      throw new Error(`${dir} is not a folder (a symbolic link?); files sent to hermes are kept only in a real inbox folder`);
    throw err;
  });
  const safe = safeName(name);
  const ext = extname(safe);
  const stem = safe.slice(0, safe.length - ext.length);
  try {
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? safe : `${stem}-${n}${ext}`;
      try {
        const handle = await open(pathInFolder(folder, dir, candidate), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
        await handle.writeFile(bytes).finally(() => handle.close());
        return `inbox/${candidate}`;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST" || n > 999) throw err;
      }
    }
  } finally {
    await folder.close();
  }
}

/**
 * Saves a file a user sent in the inbox and says so for the model: where it is, its size and type, and
 * whether read_file can open it. The same words whichever connector the file came by.
 */
export async function keepInInbox(filesRoot: string, file: { name: string; mime: string; bytes: Buffer }): Promise<string> {
  const path = await saveToInbox(filesRoot, file.name, file.bytes);
  const type = file.mime || "unknown type";
  const readable = isReadableText(file.name, file.mime, file.bytes)
    ? "read_file can open it"
    : "it is not a text file, so read_file cannot show its content; say so if asked what is in it";
  return `[file received: saved as ${path} in the files folder (${formatSize(file.bytes.length)}, ${type}); ${readable}]`;
}

/** True when read_file can show this file: a text type or extension, valid UTF-8, no NUL bytes. */
export function isReadableText(name: string, mime: string, bytes: Buffer): boolean {
  const claimed = TEXT_TYPES.test(mime) || TEXT_EXTENSIONS.has(extname(name).toLowerCase());
  const head = bytes.subarray(0, 8192);
  if (head.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: head.length < bytes.length });
  } catch {
    return false;
  }
  return claimed || !mime || mime === "application/octet-stream";
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
