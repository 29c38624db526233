/**
 * write_file where replacing a file (a new file renamed over it) is not what writing it was: a folder
 * hermes may not add to, and a file of another user that hermes may write. Run as nobody, standing in
 * for the service's `hermes` user, against root's folder and files.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/schema.js";
import { openStore } from "../../src/store/store.js";
import { loadTools } from "../../src/tools/registry.js";
import type { AnyTool } from "../../src/tools/types.js";
import { useTempDir } from "../helpers/fixture.js";

const NOBODY = 65534;
const JAIL = pathToFileURL(resolve(import.meta.dirname, "../../dist/tools/files-jail.js")).href;

/** The jail's write as the user nobody: its answer, or its error's message. */
function writeAsNobody(root: string, path: string, content: string): string {
  const script = `import(${JSON.stringify(JAIL)}).then((m) => m.createJail(${JSON.stringify(root)}).write(${JSON.stringify(path)}, ${JSON.stringify(content)})).then((r) => console.log(r), (e) => console.log("error: " + e.message));`;
  const run = spawnSync("setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", process.execPath, "-e", script], {
    encoding: "utf8",
  });
  return (run.stdout + run.stderr).trim();
}

/** A files folder nobody can reach: root's, 0755 unless `mode` says otherwise. */
function filesFolder(mode = 0o755): string {
  const dir = useTempDir();
  chmodSync(dir, 0o755);
  const root = join(dir, "files");
  mkdirSync(root);
  chmodSync(root, mode);
  return root;
}

describe.skipIf(process.getuid?.() !== 0)("write_file in a folder or on a file of another user", () => {
  it("writes a file it may write in a folder it may not add to (it was refused: no new file could be made beside it)", () => {
    const root = filesFolder(0o755);
    writeFileSync(join(root, "todo.txt"), "old");
    chownSync(join(root, "todo.txt"), NOBODY, NOBODY);
    expect(writeAsNobody(root, "todo.txt", "new")).toBe("Wrote 3 bytes to todo.txt.");
    expect(readFileSync(join(root, "todo.txt"), "utf8")).toBe("new");
    expect(readdirSync(root)).toEqual(["todo.txt"]);
  });

  it("keeps the owner of a file of another user it may write (it became hermes's, and its owner could no longer write it)", () => {
    const root = filesFolder(0o777);
    writeFileSync(join(root, "shared.txt"), "old", { mode: 0o664 });
    chmodSync(join(root, "shared.txt"), 0o664);
    chownSync(join(root, "shared.txt"), 0, NOBODY);
    expect(writeAsNobody(root, "shared.txt", "new")).toBe("Wrote 3 bytes to shared.txt.");
    expect(readFileSync(join(root, "shared.txt"), "utf8")).toBe("new");
    expect(statSync(join(root, "shared.txt"))).toMatchObject({ uid: 0, gid: NOBODY, mode: 0o100664 });
    expect(readdirSync(root)).toEqual(["shared.txt"]);
  });
});

describe("list_files and write_file's new files", () => {
  it("does not list a file write_file was writing (one left by a crash in the middle of a write)", async () => {
    const root = join(useTempDir(), "files");
    const store = openStore(":memory:");
    try {
      const config = configSchema().parse({ timezone: "Europe/Berlin", tools: { files: { root } } });
      const { tools } = await loadTools(["list_files", "write_file"], { config, store, now: () => new Date() });
      const call = (name: string, args: unknown) => {
        const tool = tools.get(name) as AnyTool;
        const ctx = { signal: new AbortController().signal, sessionKey: "cli:t", channel: "cli:t", runId: "r", callId: "c" };
        return tool.run(tool.input.parse(args), ctx);
      };
      await call("write_file", { path: "a.txt", content: "a" });
      writeFileSync(join(root, ".hermes-write-0123456789abcdef"), "half a wri");
      expect(await call("list_files", {})).toBe("a.txt (1 bytes)");
    } finally {
      store.close();
    }
  });
});
