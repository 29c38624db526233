import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeModel } from "../fakes/model-server.js";
import { baseSettings, createTempDir, startHermes } from "../helpers/hermes.js";
import { stoppedAfterEach } from "../helpers/per-test.js";
import { PLUGIN_FIXTURES, pluginSettings } from "../helpers/plugins.js";

/** Node 22+ also keeps a cache of its own (`module.enableCompileCache`) for what hermes' loader leaves to Node. */
const builtIn = Number(process.versions.node.split(".")[0]) >= 22;

interface Report {
  dir?: string;
  mode?: string;
  node?: boolean;
  hits?: number;
  misses?: number;
}

/** hermes' own entries, one per chunk it compiled (Node's are in a folder of their own). */
function chunkEntries(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".cache"))
    .map((name) => join(dir, name));
}

function cacheFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe("the compile cache of the hermes command", () => {
  const t = stoppedAfterEach();
  const homes: { cleanup(): void }[] = [];
  afterEach(() => {
    for (const home of homes.splice(0)) home.cleanup();
  });
  /** A cache home of its own for one test, removed after it. */
  const newHome = () => {
    const dir = createTempDir();
    homes.push(dir);
    return dir.path;
  };

  async function start(cacheHome: string, env: NodeJS.ProcessEnv = {}, settings?: Record<string, unknown>): Promise<Report> {
    t.model ??= await startFakeModel();
    t.model.respond(() => ({ text: "ok" }));
    const hermes = await startHermes(
      { ...(settings ?? baseSettings(t.model.url)), log: { level: "debug" } },
      { env: { XDG_CACHE_HOME: cacheHome, CACHE_DIRECTORY: "", ...env } },
    );
    t.hermes = hermes;
    const line = (await hermes.waitForLog((l) => l.msg === "compile cache")) as Report;
    expect((await hermes.ask("hello")).stdout.trim()).toBe("ok");
    await hermes.stop();
    t.hermes = undefined;
    return line;
  }

  it("is written by the first start and read by the next", async () => {
    const home = newHome();
    const dir = join(home, "hermes", "compile-cache");
    const first = await start(home);
    expect(first.dir).toBe(dir);
    expect(cacheFiles(dir).length).toBeGreaterThan(0);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const second = await start(home);
    expect(first).toMatchObject({ mode: "vm", node: builtIn, hits: 0 });
    expect(first.misses).toBeGreaterThan(3);
    expect(chunkEntries(dir)).toHaveLength(first.misses ?? 0);
    expect(second).toMatchObject({ mode: "vm", node: builtIn, misses: 0, hits: first.misses });
    // Node's own entries, for what the bundle leaves to Node, sit in a folder only this user can enter.
    if (builtIn) {
      expect(cacheFiles(join(dir, "node")).length).toBeGreaterThan(0);
      expect(statSync(join(dir, "node")).mode & 0o777).toBe(0o700);
    }
  });

  it("keeps apart the entries of processes started with other V8 flags", async () => {
    const home = newHome();
    const plain = await start(home);
    const flagged = await start(home, { NODE_OPTIONS: "--stack-trace-limit=20" });
    const again = await start(home);
    const flaggedAgain = await start(home, { NODE_OPTIONS: "--stack-trace-limit=20" });
    expect(flagged).toMatchObject({ hits: 0, misses: plain.misses });
    expect(again).toMatchObject({ misses: 0 });
    expect(flaggedAgain).toMatchObject({ misses: 0 });
  });

  it("throws away entries V8 cannot use and writes them again", async () => {
    const home = newHome();
    const dir = join(home, "hermes", "compile-cache");
    await start(home);
    const entries = chunkEntries(dir);
    for (const file of cacheFiles(dir)) writeFileSync(file, "not a code cache");
    const garbled = await start(home);
    const again = await start(home);
    for (const file of chunkEntries(dir)) expect(statSync(file).size).toBeGreaterThan(100);
    expect(garbled.hits).toBe(0);
    expect(garbled.misses).toBe(entries.length);
    expect(again).toMatchObject({ misses: 0, hits: entries.length });
  });

  it("leaves the chunk with a dynamic import() to Node: a plugin only import() loads still loads from a warm cache", async () => {
    const home = newHome();
    const plugins = newHome();
    // A top-level await: require() cannot load this module, the resolver's import() does.
    const chat = pathToFileURL(join(PLUGIN_FIXTURES, "memory-chat/index.js")).href;
    mkdirSync(join(plugins, "late"));
    writeFileSync(
      join(plugins, "late/index.mjs"),
      `const { default: chat } = await import(${JSON.stringify(chat)});\nexport default chat;\n`,
    );
    t.model ??= await startFakeModel();
    const settings = pluginSettings(t.model.url, [{ name: "mem", module: join(plugins, "late/index.mjs"), options: { room: "r5" } }]);
    const first = await start(home, {}, settings);
    const second = await start(home, {}, settings); // would fail to load the plugin if the resolver were cached
    expect(second).toMatchObject({ mode: "vm", misses: 0, hits: first.misses });
    // Every chunk of a few lines or more has its entry but the resolver's.
    const entries = chunkEntries(join(home, "hermes", "compile-cache")).map((file) => file.split("/").pop() ?? "");
    expect(entries.some((name) => name.startsWith("resolve-"))).toBe(false);
    expect(entries.some((name) => name.startsWith("daemon-"))).toBe(true);
  });

  // Node 22.18+ strips a TypeScript module's types by the format its loader passes along with the source.
  it.runIf((process.features as { typescript?: string | false }).typescript)(
    "leaves a plugin's own module to Node: one written in TypeScript loads",
    async () => {
      const home = newHome();
      const plugins = newHome();
      const chat = pathToFileURL(join(PLUGIN_FIXTURES, "memory-chat/index.js")).href;
      writeFileSync(
        join(plugins, "typed.ts"),
        `import chat from ${JSON.stringify(chat)};\nconst plugin: typeof chat = chat;\nexport default plugin;\n`,
      );
      t.model ??= await startFakeModel();
      const settings = pluginSettings(t.model.url, [{ name: "mem", module: join(plugins, "typed.ts"), options: { room: "r6" } }]);
      await start(home, {}, settings);
      expect(await start(home, {}, settings)).toMatchObject({ mode: "vm", misses: 0 });
    },
  );

  it.runIf(builtIn)("leaves Node's own cache off when its folder is open to others", async () => {
    const home = newHome();
    const nodeDir = join(home, "hermes", "compile-cache", "node");
    mkdirSync(nodeDir, { recursive: true });
    chmodSync(nodeDir, 0o755); // others may enter: Node's folders in it follow the umask
    const first = await start(home);
    expect(first).toMatchObject({ mode: "vm", node: false });
    expect(await start(home)).toMatchObject({ mode: "vm", node: false, misses: 0, hits: first.misses });
    expect(cacheFiles(nodeDir)).toEqual([]);
  });

  it("is not used from a directory that others can write, nor when turned off", async () => {
    const home = newHome();
    const dir = join(home, "hermes", "compile-cache");
    await start(home, { HERMES_COMPILE_CACHE: "off" });
    expect(existsSync(dir)).toBe(false);
    const shared = newHome();
    const sharedDir = join(shared, "hermes", "compile-cache");
    await start(shared); // makes the directory, then it is opened to everyone
    chmodSync(sharedDir, 0o777);
    for (const file of cacheFiles(sharedDir)) writeFileSync(file, "planted by another user");
    const report = await start(shared);
    expect(report.dir).toBeUndefined();
    for (const file of cacheFiles(sharedDir)) expect(statSync(file).size).toBe("planted by another user".length);
  });
});
