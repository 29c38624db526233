/**
 * The file tools against a folder that is swapped for a symlink to the outside while they work, against
 * hard links to outside files, against FIFOs, and against writes and reads of one file at once.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema, type ToolName } from "../../src/config/schema.js";
import { openStore } from "../../src/store/store.js";
import { loadTools } from "../../src/tools/registry.js";
import type { AnyTool } from "../../src/tools/types.js";
import { createTempDir } from "../helpers/hermes.js";

/** Swaps root/d between a real folder and a symlink to `outside`, every millisecond, until killed. */
const SWAPPER = `
const { renameSync } = require("node:fs");
const [d, real, link] = process.argv.slice(1);
const move = (a, b) => { try { renameSync(a, b); } catch {} };
// Each state is held for a millisecond, so calls meet the real folder and the link alike, and the swaps between race them.
const hold = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
process.stdout.write("go\\n");
for (;;) { move(d, real); move(link, d); hold(); move(d, link); move(real, d); hold(); }
`;

describe("file tools and a hostile files folder", () => {
  const dir = createTempDir();
  const root = join(dir.path, "files");
  const outside = join(dir.path, "outside");
  const store = openStore(":memory:");
  let tools: Map<string, AnyTool>;
  const call = async (name: string, args: unknown) => {
    const tool = tools.get(name) as AnyTool;
    const ctx = { signal: new AbortController().signal, sessionKey: "cli:t", channel: "cli:t", runId: "r", callId: "c" };
    return tool.run(tool.input.parse(args), ctx);
  };

  beforeAll(async () => {
    mkdirSync(join(root, "d"), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(root, "d", "secret.txt"), "inside");
    writeFileSync(join(outside, "secret.txt"), "OUTSIDE SECRET");
    const config = configSchema().parse({ timezone: "Europe/Berlin", tools: { files: { root } } });
    const names: ToolName[] = ["read_file", "list_files", "write_file"];
    ({ tools } = await loadTools(names, { config, store, now: () => new Date() }));
  });
  afterAll(() => {
    store.close();
    dir.cleanup();
  });

  it("never reads or writes outside while a folder is swapped for a symlink to the outside", async () => {
    symlinkSync(outside, join(root, "d-link"));
    const swapper: ChildProcess = spawn(process.execPath, ["-e", SWAPPER, join(root, "d"), join(root, "d-real"), join(root, "d-link")], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      await new Promise((resolve) => swapper.stdout?.once("data", resolve));
      const seen = { inside: 0, outside: 0, refused: 0 };
      // 400 tries at least; more, for up to 20 s, while none has met the real folder or the link yet (the
      // swapper leaves each in place only for a moment, so on a busy machine a few in a thousand do).
      const deadline = Date.now() + 20_000;
      for (let i = 0; i < 400 || ((seen.inside === 0 || seen.refused === 0) && Date.now() < deadline); i++) {
        const [read] = await Promise.allSettled([
          call("read_file", { path: "d/secret.txt" }),
          call("write_file", { path: "d/planted.txt", content: "planted" }),
        ]);
        if (read.status === "rejected") seen.refused++;
        else if (read.value.includes("OUTSIDE")) seen.outside++;
        else seen.inside++;
      }
      expect(seen.outside).toBe(0);
      expect(existsSync(join(outside, "planted.txt"))).toBe(false);
      // The race was real: some calls met the real folder and some met the link.
      expect(seen.inside).toBeGreaterThan(0);
      expect(seen.refused).toBeGreaterThan(0);
    } finally {
      swapper.kill("SIGKILL");
    }
  }, 40_000);

  it("refuses a hard link to a file outside, for reads and writes, and leaves the outside file alone", async () => {
    writeFileSync(join(outside, "passwords.txt"), "hunter2");
    linkSync(join(outside, "passwords.txt"), join(root, "innocent.txt"));
    await expect(call("read_file", { path: "innocent.txt" })).rejects.toThrow(/'innocent\.txt' has 2 hard links/);
    await expect(call("write_file", { path: "innocent.txt", content: "x" })).rejects.toThrow(/has 2 hard links/);
    expect(readFileSync(join(outside, "passwords.txt"), "utf8")).toBe("hunter2");
    expect(await call("write_file", { path: "single.txt", content: "ok" })).toBe("Wrote 2 bytes to single.txt.");
    expect(await call("read_file", { path: "single.txt" })).toBe("ok");
  });

  it("refuses a FIFO at once instead of hanging on it, for reads and writes", async () => {
    execFileSync("mkfifo", [join(root, "pipe")]);
    await expect(call("read_file", { path: "pipe" })).rejects.toThrow(/'pipe' is not a regular file/);
    await expect(call("write_file", { path: "pipe", content: "x" })).rejects.toThrow(/'pipe' is not a regular file/);
    expect(await call("list_files", {})).toContain("pipe (not a regular file)");
  });
  it("replaces a file whole: writes at once leave one of them, a read meanwhile sees old or new, and the mode is kept", async () => {
    const long = "L".repeat(300_000);
    const short = "s".repeat(1000);
    const whole = (text: string) => text === long || text === short;
    await call("write_file", { path: "whole.txt", content: long });
    chmodSync(join(root, "whole.txt"), 0o600);
    const seen = { mixedFiles: 0, mixedReads: 0 };
    for (let i = 0; i < 30; i++) {
      const [, , read] = await Promise.all([
        call("write_file", { path: "whole.txt", content: long }),
        call("write_file", { path: "whole.txt", content: short }),
        call("read_file", { path: "whole.txt" }),
      ]);
      if (!whole(readFileSync(join(root, "whole.txt"), "utf8"))) seen.mixedFiles++;
      if (!whole(read)) seen.mixedReads++;
    }
    expect(seen).toEqual({ mixedFiles: 0, mixedReads: 0 });
    expect(statSync(join(root, "whole.txt")).mode & 0o777).toBe(0o600);
    // Nothing of the writes is left behind but the file itself.
    expect(readdirSync(root).filter((n) => n.startsWith("."))).toEqual([]);
  }, 30_000);

  it("counts write_file's limit in bytes as written, not in characters", () => {
    const input = (tools.get("write_file") as AnyTool).input;
    expect(() => input.parse({ path: "big.txt", content: "é".repeat(600_000) })).toThrow(/over tools\.files\.max_bytes \(1000000 bytes\)/);
    expect(input.parse({ path: "big.txt", content: "é".repeat(500_000) })).toBeTruthy();
  });

  it("leaves a file the owner made read-only as it is (a write replaces a file, which a read-only one must not be)", async () => {
    writeFileSync(join(root, "keep.txt"), "as written");
    chmodSync(join(root, "keep.txt"), 0o444);
    await expect(call("write_file", { path: "keep.txt", content: "overwritten" })).rejects.toThrow(/'keep\.txt' is read-only/);
    expect(readFileSync(join(root, "keep.txt"), "utf8")).toBe("as written");
  });
});
