// node:fs/promises (and the readline and file-handle code it loads, ~1 MB of RSS on Node 24) is reached
// through fs.promises at the first call, not loaded with the tools at start.
import { constants, promises as fsp } from "node:fs";
import { dirname, isAbsolute, join, sep } from "node:path";
import { z } from "zod";
import type { ToolName } from "../src/config/schema.js";
import { ToolError } from "../src/errors.js";
import { defineTool } from "../src/tools/define.js";
import type { AnyTool, ToolDeps } from "../src/tools/types.js";

const MAX_LIST_ENTRIES = 500;
const relPath = z.string().min(1).max(1024);

/** read_file, list_files and write_file, confined to `tools.files.root`. */
export function createTool(name: ToolName, deps: ToolDeps): AnyTool {
  const { root, max_bytes: maxBytes } = deps.config.tools.files;
  const jail = createJail(root);
  switch (name) {
    case "read_file":
      return defineTool({
        name,
        description: 'Read a text file from the owner\'s files folder. Example: {"path": "todo.txt"}.',
        input: z.strictObject({ path: relPath }),
        readOnly: true,
        run: async ({ path }) => readCapped(await jail.existing(path), maxBytes),
      });
    case "list_files":
      return defineTool({
        name,
        description: 'List files and folders in the owner\'s files folder. Example: {} for the top, or {"path": "projects"}.',
        input: z.strictObject({ path: relPath.optional() }),
        readOnly: true,
        run: async ({ path }) => listDir(await jail.existing(path ?? "."), path ?? "."),
      });
    default:
      return defineTool({
        name: "write_file",
        description:
          'Create or overwrite a text file in the owner\'s files folder. Example: {"path": "shopping.txt", "content": "milk\\neggs"}.',
        input: z.strictObject({ path: relPath, content: z.string().max(maxBytes) }),
        readOnly: false,
        run: async ({ path, content }) => writeConfined(await jail.writable(path), content, path),
      });
  }
}

/** Resolves model-given paths inside `root`: no absolute paths, no `..`, no symlink that leads outside. */
export function createJail(root: string) {
  let realRoot: Promise<string> | undefined;
  const base = () => {
    realRoot ??= fsp.mkdir(root, { recursive: true }).then(() => fsp.realpath(root));
    return realRoot;
  };
  const checkSyntax = (path: string) => {
    if (isAbsolute(path) || /^[a-zA-Z]:[\\/]/.test(path)) throw new ToolError(`'${path}' is absolute; give a path inside the files folder`);
    if (path.split(/[\\/]/).includes("..")) throw new ToolError(`'${path}' contains '..'; paths must stay inside the files folder`);
    if (path.includes("\0")) throw new ToolError("the path contains a NUL character");
  };
  const inside = (realRootPath: string, candidate: string) => candidate === realRootPath || candidate.startsWith(realRootPath + sep);
  return {
    /** An existing path, resolved through symlinks, that must stay inside the root. */
    async existing(path: string): Promise<string> {
      checkSyntax(path);
      const rootPath = await base();
      const target = await fsp.realpath(join(rootPath, path)).catch(() => {
        throw new ToolError(`'${path}' does not exist`);
      });
      if (!inside(rootPath, target)) throw new ToolError(`'${path}' leads outside the files folder`);
      return target;
    },
    /** A path to write: its deepest existing ancestor must resolve inside the root; the file itself must not be a symlink. */
    async writable(path: string): Promise<string> {
      checkSyntax(path);
      const rootPath = await base();
      const target = join(rootPath, path);
      let ancestor = dirname(target);
      while (!(await exists(ancestor))) ancestor = dirname(ancestor);
      if (!inside(rootPath, await fsp.realpath(ancestor))) throw new ToolError(`'${path}' leads outside the files folder`);
      await fsp.mkdir(dirname(target), { recursive: true });
      if (!inside(rootPath, await fsp.realpath(dirname(target)))) throw new ToolError(`'${path}' leads outside the files folder`);
      const info = await fsp.lstat(target).catch(() => undefined);
      if (info?.isSymbolicLink()) throw new ToolError(`'${path}' is a symbolic link; hermes does not write through links`);
      if (info?.isDirectory()) throw new ToolError(`'${path}' is a folder`);
      return target;
    },
  };
}

async function exists(path: string): Promise<boolean> {
  return fsp.lstat(path).then(
    () => true,
    () => false,
  );
}

async function readCapped(path: string, maxBytes: number): Promise<string> {
  const info = await fsp.stat(path);
  if (info.isDirectory()) throw new ToolError("that is a folder; use list_files");
  const handle = await fsp.open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const length = Math.min(info.size, maxBytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, 0);
    const text = buffer.toString("utf8");
    if (buffer.includes(0)) throw new ToolError("that file is binary; only text files can be read");
    return info.size > maxBytes ? `${text}\n[… file cut: showed ${maxBytes} of ${info.size} bytes]` : text;
  } finally {
    await handle.close();
  }
}

async function listDir(path: string, shown: string): Promise<string> {
  const info = await fsp.stat(path);
  if (!info.isDirectory()) return `${shown} is a file of ${info.size} bytes`;
  const entries = await fsp.readdir(path, { withFileTypes: true });
  entries.sort((a, b) => a.name.localeCompare(b.name));
  const lines = await Promise.all(
    entries.slice(0, MAX_LIST_ENTRIES).map(async (e) => {
      if (e.isDirectory()) return `${e.name}/`;
      if (e.isSymbolicLink()) return `${e.name} (link)`;
      const size = await fsp.stat(join(path, e.name)).then(
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

async function writeConfined(path: string, content: string, shown: string): Promise<string> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
  const handle = await fsp.open(path, flags, 0o644);
  try {
    await handle.writeFile(content, "utf8");
  } finally {
    await handle.close();
  }
  return `Wrote ${Buffer.byteLength(content)} bytes to ${shown}.`;
}
