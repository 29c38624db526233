import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { blamePlugin, type Escape, retirePlugin, stackFiles, watchedKeys, watchPlugin } from "../../../connectors/plugins/faults.js";
import { createTempDir } from "../../helpers/hermes.js";

let dir: ReturnType<typeof createTempDir>;
let root: string;
let told: { name: string; how: Escape; message: string }[];
beforeEach(() => {
  dir = createTempDir();
  root = realpathSync(dir.path);
  told = [];
});
afterEach(() => dir.cleanup());

/** A file on disk (scopes are real paths). */
function file(path: string): string {
  const full = join(root, path);
  mkdirSync(join(full, ".."), { recursive: true });
  writeFileSync(full, "");
  return full;
}

function watch(name: string, code: { file: string; root?: string }) {
  watchPlugin(name, code, (how, err) => told.push({ name, how, message: (err as Error).message }));
}

function thrownAt(message: string, ...frames: string[]): Error {
  const err = new Error(message);
  err.stack = [`Error: ${message}`, ...frames.map((f) => `    at ${f}`)].join("\n");
  return err;
}

it("blames the plugin whose package holds a frame, also when the frame is a file:// URL", () => {
  const entry = file("node_modules/hermes-connector-a/index.js");
  const helper = file("node_modules/hermes-connector-a/lib/socket.js");
  watch("a", { file: entry, root: join(root, "node_modules/hermes-connector-a") });
  const err = thrownAt("socket closed", "node:internal/streams:12:3", `Socket.onData (${pathToFileURL(helper).href}:40:11)`);
  expect(blamePlugin("uncaught error", err)).toBe(true);
  expect(told).toEqual([{ name: "a", how: "uncaught error", message: "socket closed" }]);
});

it("blames a loose file only for frames in that file, not its neighbours", () => {
  const plugin = file("plugins/b.mjs");
  const neighbour = file("plugins/other.mjs");
  watch("b", { file: plugin });
  expect(blamePlugin("unhandled rejection", thrownAt("elsewhere", `${neighbour}:3:9`))).toBe(false);
  expect(blamePlugin("unhandled rejection", thrownAt("here", `async poll (${plugin}:7:5)`))).toBe(true);
  expect(told).toEqual([{ name: "b", how: "unhandled rejection", message: "here" }]);
});

it("the nearest plugin frame decides; entries sharing that module are all told", () => {
  const shared = file("shared/plugin.mjs");
  const caller = file("caller/plugin.mjs");
  watch("c1", { file: shared });
  watch("c2", { file: shared });
  watch("d", { file: caller });
  expect(blamePlugin("uncaught error", thrownAt("boom", `Timeout._onTimeout (${shared}:2:2)`, `${caller}:5:5`))).toBe(true);
  expect(told.map((t) => t.name).sort()).toEqual(["c1", "c2"]);
});

it("leaves errors without a plugin frame, and values that are no errors, to the process", () => {
  watch("e", { file: file("e.mjs") });
  expect(blamePlugin("uncaught error", thrownAt("ours", "/usr/lib/hermes/dist/app/hermes.js:10:1"))).toBe(false);
  expect(blamePlugin("unhandled rejection", "a string")).toBe(false);
  expect(blamePlugin("unhandled rejection", undefined)).toBe(false);
  expect(told).toEqual([]);
});

it("narrows a package that also holds the running hermes to the plugin's file", () => {
  const repo = realpathSync(fileURLToPath(new URL("../../..", import.meta.url)));
  const plugin = join(repo, "test/fixtures/plugins/restless/plugin.mjs");
  watch("inside", { file: plugin, root: repo });
  expect(blamePlugin("uncaught error", thrownAt("hermes's own", `${join(repo, "src/daemon/daemon.ts")}:1:1`))).toBe(false);
  expect(blamePlugin("uncaught error", thrownAt("the plugin's", `${plugin}:20:11`))).toBe(true);
  expect(told.map((t) => t.message)).toEqual(["the plugin's"]);
});

it("reads frames with and without a function name, and drops line, column and query", () => {
  const err = thrownAt("x", "f (/a/b.js:1:2)", "/c/d.mjs:3:4", "g (file:///e/f.mjs?v=2:5:6)", "async Promise.all (index 0)", "node:fs:1:1");
  expect(stackFiles(err)).toEqual(["/a/b.js", "/c/d.mjs", "/e/f.mjs"]);
});

it("keeps only a few stopped instances of an entry watched, and blames the live one for a throw in the file they share", () => {
  const code = { file: file("plugins/leaky.mjs") };
  const noted: string[] = [];
  const log = { warn: (_obj: object, msg: string) => void noted.push(msg) };
  // 50 reloads that each made the plugin again, every old instance retired as it stopped.
  let key: string | undefined;
  for (let i = 0; i < 50; i++) {
    if (key) retirePlugin(key, log, code.file);
    key = watchPlugin("leaky", code, (how, err) => told.push({ name: `leaky#${i}`, how, message: (err as Error).message }));
  }
  expect(blamePlugin("uncaught error", thrownAt("ticker broke", `Timeout._onTimeout (${code.file}:3:9)`))).toBe(true);
  expect(told.map((t) => t.name)).toEqual(["leaky#49"]);
  expect(noted).toEqual([]);
  expect(watchedKeys().filter((k) => k.startsWith("leaky\0"))).toHaveLength(4); // the live one and three stopped ones
});
