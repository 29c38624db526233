import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeModel } from "../fakes/model-server.js";
import { baseSettings, CLI, createTempDir, DAEMON_NODE_FLAGS, launch, runNode, startHermes, writeConfig } from "../helpers/hermes.js";
import { httpEnv, httpSettings } from "../helpers/http.js";
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

  /**
   * One daemon's life with the cache in `cacheHome`: its report, after a question answered. With `pruned`,
   * it also waits for the daemon's pass over the cache a second after the start; `cli` runs a copy of the command.
   */
  async function start(
    cacheHome: string,
    env: NodeJS.ProcessEnv = {},
    settings?: Record<string, unknown>,
    options: { pruned?: boolean; flushed?: boolean; cli?: string } = {},
  ): Promise<Report & { removed?: number; written?: number; checked?: number }> {
    t.model ??= await startFakeModel();
    t.model.respond(() => ({ text: "ok" }));
    const config = { ...(settings ?? baseSettings(t.model.url)), log: { level: "debug" } };
    const daemonEnv = { XDG_CACHE_HOME: cacheHome, CACHE_DIRECTORY: "", ...env };
    const dir = createTempDir();
    homes.push(dir);
    const hermes = options.cli
      ? await launch(dir.path, writeConfig(dir.path, config), daemonEnv, options.cli)
      : await startHermes(config, { env: daemonEnv });
    t.hermes = hermes;
    const line = (await hermes.waitForLog((l) => l.msg === "compile cache")) as Report;
    expect((await hermes.ask("hello")).stdout.trim()).toBe("ok");
    const pruned = options.pruned ? await hermes.waitForLog((l) => l.msg === "compile cache pruned") : undefined;
    const flushed = options.flushed ? await hermes.waitForLog((l) => l.msg === "compile cache flushed") : undefined;
    await hermes.stop();
    t.hermes = undefined;
    return {
      ...line,
      ...(pruned && { removed: pruned.removed as number, swept: pruned.swept as boolean }),
      ...(flushed && { written: flushed.written as number, checked: flushed.checked as number }),
    };
  }

  it("is written by the first start and read by the next, in a folder of the build", async () => {
    const home = newHome();
    const base = join(home, "hermes", "compile-cache");
    const first = await start(home);
    const dir = first.dir ?? "";
    expect(dirname(dir)).toBe(base);
    expect(basename(dir)).toMatch(/^build-[0-9a-f]{8}$/);
    expect(cacheFiles(dir).length).toBeGreaterThan(0);
    expect(statSync(base).mode & 0o777).toBe(0o700);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const second = await start(home);
    expect(second.dir).toBe(dir);
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

  it("has a daemon compare the entries another command made once, not at every start", async () => {
    const home = newHome();
    t.model ??= await startFakeModel();
    const settings = baseSettings(t.model.url);
    const configDir = createTempDir();
    homes.push(configDir);
    // `config check` writes entries for the chunks it compiled (the config's) when it exits; run with the
    // daemon's Node flags (on Node 22+ the unit's V8 flags), it writes them under the daemon's V8 tag.
    const config = writeConfig(configDir.path, settings);
    const check = await runNode([...DAEMON_NODE_FLAGS, CLI, "config", "check", "--config", config], {
      env: { HERMES_CONFIG: "", XDG_CACHE_HOME: home, CACHE_DIRECTORY: "" },
    });
    expect(check.code).toBe(0);
    const first = await start(home, {}, settings, { flushed: true });
    expect(first.hits).toBeGreaterThan(0);
    expect(first.misses).toBeGreaterThan(0);
    // Those entries hold what `config check` ran: the daemon makes them again from its start and compares.
    expect(first.checked).toBe(first.hits);
    expect(first.written).toBeGreaterThanOrEqual(first.misses ?? 0);
    const second = await start(home, {}, settings, { flushed: true });
    expect(second).toMatchObject({ misses: 0, hits: (first.hits ?? 0) + (first.misses ?? 0), checked: 0, written: 0 });
    // The record holds each entry at the size the daemon left it: one another command wrote since (here: a
    // record that says another size) is compared again, once.
    const record = readdirSync(first.dir ?? "").find((name) => name.endsWith(".chunks")) ?? "";
    const lines = readFileSync(join(first.dir ?? "", record), "utf8")
      .trim()
      .split("\n");
    expect(lines).toHaveLength((first.hits ?? 0) + (first.misses ?? 0));
    writeFileSync(join(first.dir ?? "", record), [`${lines[0]?.split(" ")[0]} 1`, ...lines.slice(1)].join("\n"));
    const third = await start(home, {}, settings, { flushed: true });
    expect(third).toMatchObject({ misses: 0, checked: 1 });
    expect((await start(home, {}, settings, { flushed: true })).checked).toBe(0);
    // A chunk this config loads for the first time (the HTTP door's) is written, and compared no more after.
    const door = { ...settings, connectors: { http: httpSettings() } };
    const withDoor = await start(home, httpEnv, door, { flushed: true });
    expect(withDoor.misses).toBeGreaterThan(0);
    expect(withDoor).toMatchObject({ checked: 0, written: withDoor.misses });
    const again = await start(home, httpEnv, door, { flushed: true });
    expect(again).toMatchObject({ misses: 0, checked: 0, written: 0 });
  });

  it("loads each chunk once, from a warm cache and through a symlinked install", async () => {
    const home = newHome();
    // An install reached through a symlink (as one switched at each upgrade): Node's loader names a module by
    // its real path, and so must the chunks' own requires of one another, or a chunk would run twice.
    const real = join(newHome(), "hermes-1.2.3");
    cpSync(dirname(CLI), join(real, "dist/app"), { recursive: true });
    symlinkSync(join(dirname(CLI), "../../node_modules"), join(real, "node_modules"));
    const link = join(newHome(), "hermes");
    symlinkSync(real, link);
    const cli = join(link, "dist/app/hermes.js");
    await start(home, {}, undefined, { cli });
    const coverage = newHome();
    const warm = await start(home, { NODE_V8_COVERAGE: coverage }, undefined, { cli });
    expect(warm.hits).toBeGreaterThan(3);
    // Each script V8 compiled, as the coverage Node writes at exit lists them: a chunk run twice is listed twice.
    const chunks = readdirSync(coverage)
      .flatMap((file) => (JSON.parse(readFileSync(join(coverage, file), "utf8")) as { result: { url: string }[] }).result)
      .map((script) => script.url)
      .filter((url) => url.includes("/dist/app/chunks/"));
    expect(chunks.length).toBeGreaterThan(warm.hits ?? 0);
    expect(chunks.filter((url, i) => chunks.indexOf(url) !== i)).toEqual([]);
    expect(chunks.every((url) => url.startsWith(pathToFileURL(real).href) || url.startsWith(real))).toBe(true);
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
    const dir = (await start(home)).dir ?? "";
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
    const entries = chunkEntries(first.dir ?? "").map((file) => file.split("/").pop() ?? "");
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
    const first = await start(home);
    const nodeDir = join(first.dir ?? "", "node");
    rmSync(nodeDir, { recursive: true });
    mkdirSync(nodeDir);
    chmodSync(nodeDir, 0o755); // others may enter: Node's folders in it follow the umask
    expect(await start(home)).toMatchObject({ mode: "vm", node: false, misses: 0, hits: first.misses });
    expect(cacheFiles(nodeDir)).toEqual([]);
  });

  it("starts a new folder at an upgrade; the daemon removes other builds' folders once unused for a week", async () => {
    const home = newHome();
    const base = join(home, "hermes", "compile-cache");
    const weekAgo = (path: string, extraMs = 3600_000) => {
      const at = (Date.now() - 7 * 24 * 3600_000 - extraMs) / 1000;
      utimesSync(path, at, at);
    };
    // What an older hermes left: its entries at the top (the layout before build folders) and Node's folder.
    mkdirSync(join(base, "node", "v22.1.0-x64-1234abcd-0"), { recursive: true, mode: 0o700 });
    writeFileSync(join(base, "daemon-AbCd1234-v20.16.0-x64-1234.cache"), "old entry");
    writeFileSync(join(base, "daemon-AbCd1234-v20.16.0-x64-1234.cache.4242"), "half written");
    mkdirSync(join(base, "build-0000000a"));
    writeFileSync(join(base, "build-0000000a", "store-Ab12Cd34-v20.16.0-x64-1.cache"), "an older build's entry");
    weekAgo(join(base, "build-0000000a"));
    mkdirSync(join(base, "build-0000000b")); // another build, used two days ago
    utimesSync(join(base, "build-0000000b"), Date.now() / 1000 - 2 * 24 * 3600, Date.now() / 1000 - 2 * 24 * 3600);
    writeFileSync(join(base, "README"), "not the cache's");

    const first = await start(home, {}, undefined, { pruned: true });
    expect(first.removed).toBe(4);
    expect(readdirSync(base).sort()).toEqual(["README", basename(first.dir ?? ""), "build-0000000b"].sort());

    // An upgrade: a copy of the command whose chunks differ (one more here).
    const copy = join(newHome(), "hermes");
    cpSync(dirname(CLI), join(copy, "dist/app"), { recursive: true });
    symlinkSync(join(dirname(CLI), "../../node_modules"), join(copy, "node_modules"));
    writeFileSync(join(copy, "dist/app/chunks/added-Zz09Yy87.js"), "module.exports = {};\n");
    const cli = join(copy, "dist/app/hermes.js");
    const upgraded = await start(home, {}, undefined, { cli, pruned: true });
    expect(upgraded.dir).not.toBe(first.dir);
    expect(upgraded).toMatchObject({ hits: 0, misses: first.misses, removed: 0, swept: true });
    expect(existsSync(first.dir ?? "")).toBe(true); // used a moment ago

    // A week on: the first build's folder goes, and so do entries for a Node this build no longer runs on.
    const dir = upgraded.dir ?? "";
    weekAgo(first.dir ?? "");
    writeFileSync(join(dir, "daemon-AbCd1234-v20.16.0-x64-1234.cache"), "for an older Node");
    weekAgo(join(dir, "daemon-AbCd1234-v20.16.0-x64-1234.cache"));
    writeFileSync(join(dir, "daemon-AbCd1234-v20.17.0-x64-1234.cache"), "for another Node, written yesterday");
    mkdirSync(join(dir, "node", "v20.16.0-x64-1234abcd-0"), { recursive: true });
    weekAgo(join(dir, "node", "v20.16.0-x64-1234abcd-0"));
    // This Node's own entries and folder, however long ago they were written, stay.
    const current = chunkEntries(dir).filter((file) => file.includes(`-${process.version}-`));
    for (const file of current) weekAgo(file);
    const ownNode = join(dir, "node", `${process.version}-${process.arch}-0000abcd-0`);
    mkdirSync(ownNode, { recursive: true });
    weekAgo(ownNode);
    // A restart that compiled nothing leaves a folder marked within the day as it is; a week on, it is not.
    const restarted = await start(home, {}, undefined, { cli, pruned: true });
    expect(restarted).toMatchObject({ dir, misses: 0, removed: 0, swept: false });
    expect(existsSync(first.dir ?? "")).toBe(true);
    weekAgo(dir, -6 * 24 * 3600_000 + 3600_000); // marked a day and an hour ago
    const again = await start(home, {}, undefined, { cli, pruned: true });
    expect(again).toMatchObject({ dir, hits: first.misses, misses: 0, removed: 3, swept: true });
    expect(existsSync(first.dir ?? "")).toBe(false);
    expect(existsSync(join(base, "build-0000000b"))).toBe(true);
    expect(existsSync(join(dir, "daemon-AbCd1234-v20.17.0-x64-1234.cache"))).toBe(true);
    expect(chunkEntries(dir).filter((file) => file.includes(`-${process.version}-`))).toHaveLength(first.misses ?? 0);
    for (const file of current) expect(existsSync(file)).toBe(true);
    expect(existsSync(ownNode)).toBe(true);
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
