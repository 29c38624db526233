// A plugin that is down, or whose calls never settle, costs its own connector only (SPEC §17): the
// watchdog keeps pinging, a stop or reload goes on, a delivery fails, and `receive` returns once stored.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { PLUGIN_WAITS } from "../../../connectors/plugins/connector.js";
import { type Daemon, startDaemon } from "../../../src/daemon/daemon.js";
import type { Notifier } from "../../../src/daemon/systemd.js";
import { type FakeModel, startFakeModel } from "../../fakes/model-server.js";
import { baseSettings, createTempDir, writeConfig } from "../../helpers/hermes.js";
import { waitFor } from "../../helpers/wait.js";

const waits = { ...PLUGIN_WAITS };
let daemon: Daemon | undefined;
let model: FakeModel | undefined;
let dir: ReturnType<typeof createTempDir>;
beforeEach(() => {
  dir = createTempDir();
  Object.assign(PLUGIN_WAITS, { startMs: 200, stopMs: 300, sendMs: 300 });
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await model?.close();
  Object.assign(PLUGIN_WAITS, waits);
  dir.cleanup();
});

/** A notifier that counts the watchdog's pings, every 20 ms. */
function countingNotifier(): Notifier & { pings: number } {
  const n = {
    pings: 0,
    enabled: true,
    ready: async () => {},
    status: async () => {},
    watchdog: async () => {
      n.pings++;
    },
    stopping: async () => {},
    reloading: async () => {},
    watchdogIntervalMs: () => 20,
  };
  return n;
}

/** A plugin module written to the test's folder: `connector` is the body of the object create() returns. */
function pluginModule(name: string, connector: string): string {
  const path = join(dir.path, `${name}.mjs`);
  writeFileSync(
    path,
    `globalThis.__hosts ??= {};\nexport default { api: 1, create(host) { globalThis.__hosts["${name}"] = host; return { ${connector} }; } };\n`,
  );
  return path;
}

async function start(name: string, connector: string, notifier?: Notifier): Promise<Daemon> {
  model = await startFakeModel();
  const plugins = [{ name, module: pluginModule(name, connector), allowed_users: ["alice"] }];
  const config = writeConfig(dir.path, {
    ...baseSettings(model.url),
    log: { level: "silent" },
    connectors: { cli: { enabled: false }, cron: { enabled: false }, plugins },
  });
  daemon = await startDaemon(config, notifier ? { notifier } : {});
  return daemon;
}

const hostOf = (name: string) =>
  (globalThis as unknown as { __hosts: Record<string, { receive(m: unknown): Promise<void> }> }).__hosts[name];

/** Resolves once the watchdog has pinged `n` more times. */
const pingsGo = (notifier: { pings: number }, n = 5) => {
  const from = notifier.pings;
  return waitFor(() => notifier.pings >= from + n, { message: `${n} more watchdog pings`, timeoutMs: 5000 });
};

it("a plugin whose network is down, or that is still starting, does not pause the watchdog", async () => {
  const down = countingNotifier();
  await start(
    "offline",
    `async start() {}, async stop() {}, async send() { return { id: "1" }; },
     health: () => ({ ok: false, detail: "server unreachable; retrying in 5 s" })`,
    down,
  );
  expect((await daemon?.core.status())?.connectors.find((c) => c.name === "offline")).toMatchObject({ ok: false, retrying: true });
  await pingsGo(down);
  await daemon?.stop();
  daemon = undefined;
  await model?.close();

  const starting = countingNotifier();
  await start("slow", `start: () => new Promise(() => {}), async stop() {}, async send() { return { id: "1" }; }`, starting);
  await pingsGo(starting);
});

it("a plugin whose stop never settles does not hold the daemon's stop", async () => {
  const d = await start("sticky", `async start() {}, stop: () => new Promise(() => {}), async send() { return { id: "1" }; }`);
  daemon = undefined;
  await d.stop(); // vitest's timeout fails it otherwise
});

it("a plugin whose send never settles fails the delivery and turns its health red", async () => {
  const d = await start("mute", `async start() {}, async stop() {}, send: () => new Promise(() => {})`);
  await expect(d.core.deliver("mute:c1", "07:00 briefing")).rejects.toThrow(/send\(\) did not settle within 0\.3 s/);
  expect((await d.core.status()).connectors.find((c) => c.name === "mute")).toMatchObject({ ok: false, needsOwner: true });
});

it("receive returns once the message is stored, not after hermes' own answer went out", async () => {
  await start(
    "slowsend",
    `async start() {}, async stop() {},
     send: () => new Promise((resolve) => { globalThis.__sent = (globalThis.__sent ?? 0) + 1; setTimeout(() => resolve({ id: "1" }), 60_000).unref(); })`,
  );
  const host = hostOf("slowsend");
  // A stranger's message (answered with a notice) and a command: both return while their answers are still being sent.
  await host?.receive({ chat: "s", user: "mallory", text: "hi", id: "x1" });
  await host?.receive({ chat: "c", user: "alice", text: "/status", id: "x2" });
  await waitFor(() => (globalThis as unknown as { __sent?: number }).__sent === 2, { message: "both answers handed to send" });
});

/** A plugin like a network client: `options.gen` marks the instance; after stop its sends fail, and while `down` too. */
const NETWORK = `globalThis.__net ??= { hosts: [], shown: [], down: false };
export default { api: 1, create(host, options) {
  let closed = false;
  globalThis.__net.hosts.push(host);
  return {
    async start() { if (options.slowStart) await new Promise((r) => setTimeout(r, options.slowStart)); },
    async stop() { closed = true; },
    async send(chat, m) {
      if (closed || globalThis.__net.down) throw new Error("socket closed");
      globalThis.__net.shown.push({ gen: options.gen, chat, text: m.text });
      return { id: String(globalThis.__net.shown.length) };
    },
  }; } };
`;
const net = () =>
  (
    globalThis as unknown as {
      __net: { hosts: { receive(m: unknown): Promise<void> }[]; shown: { gen: number; text: string }[]; down: boolean };
    }
  ).__net;

function networkConfig(gen: number, slowStart?: number): string {
  writeFileSync(join(dir.path, "net.mjs"), NETWORK);
  return writeConfig(dir.path, {
    ...baseSettings(model?.url ?? ""),
    log: { level: "silent" },
    connectors: {
      cli: { enabled: false },
      cron: { enabled: false },
      plugins: [{ name: "net", module: "./net.mjs", allowed_users: ["alice"], options: { gen, ...(slowStart && { slowStart }) } }],
    },
  });
}

/** A daemon with the network plugin (gen 1) whose model holds the answer to "hello" until `release`. */
async function answerHeld(): Promise<{ daemon: Daemon; first: ReturnType<typeof net>["hosts"][number] | undefined; release: () => void }> {
  (globalThis as { __net?: unknown }).__net = undefined;
  model = await startFakeModel();
  let release = () => {};
  model.script({ text: "the answer", gate: new Promise<void>((resolve) => (release = resolve)) });
  daemon = await startDaemon(networkConfig(1));
  const first = net().hosts.at(-1);
  await first?.receive({ chat: "c1", user: "alice", text: "hello", id: "m1" });
  await model.waitForRequests(1);
  return { daemon, first, release };
}

it("a run under way when a reload makes its plugin again answers through the new instance; the old one hands hermes nothing more", async () => {
  const { daemon, first, release } = await answerHeld();
  networkConfig(2); // a rotated token, say
  expect(await daemon.reload()).toBe(true);
  release();
  await waitFor(() => net().shown.find((m) => m.text === "the answer"), { message: "the answer shown" });
  expect(net().shown).toEqual([{ gen: 2, chat: "c1", text: "the answer" }]);
  await expect(first?.receive({ chat: "c1", user: "alice", text: "late", id: "m2" })).rejects.toThrow(/not ready/);
});

it("a reply that ends while the new instance is still starting waits for it", async () => {
  const { daemon, release } = await answerHeld();
  networkConfig(2, 500);
  const reloading = daemon.reload();
  await waitFor(() => net().hosts.length === 2, { message: "the new instance made" });
  release(); // the old one is stopping or stopped; the new one starts for half a second
  expect(await reloading).toBe(true);
  await waitFor(() => net().shown.find((m) => m.text === "the answer"), { message: "the answer shown" });
  expect(net().shown).toEqual([{ gen: 2, chat: "c1", text: "the answer" }]);
});

it("a plugin's reply that could not be sent goes out after a restart, as Telegram's does", async () => {
  (globalThis as { __net?: unknown }).__net = undefined;
  model = await startFakeModel();
  model.script({ text: "the answer" });
  const config = networkConfig(1);
  daemon = await startDaemon(config);
  net().down = true;
  await net().hosts.at(-1)?.receive({ chat: "c1", user: "alice", text: "hello", id: "m1" });
  await waitFor(async () => (await daemon?.core.status())?.connectors.find((c) => c.name === "net" && !c.ok), {
    message: "the failed send seen",
  });
  await daemon.stop();
  net().down = false;
  daemon = await startDaemon(config);
  await waitFor(() => net().shown.find((m) => m.text === "the answer"), { message: "the owed reply sent" });
  expect(model.requests).toHaveLength(1);
});
