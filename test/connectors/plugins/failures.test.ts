import { afterEach, beforeEach, expect, it } from "vitest";
import { type Daemon, startDaemon } from "../../../src/daemon/daemon.js";
import { type FakeModel, startFakeModel } from "../../fakes/model-server.js";
// @ts-expect-error: a JavaScript fixture without types
import { openRoom } from "../../fixtures/plugins/memory-chat/index.js";
import { baseSettings, createTempDir, writeConfig } from "../../helpers/hermes.js";
import { MEMORY_CHAT } from "../../helpers/plugins.js";

interface Room {
  messages: Map<string, { id: string; text: string }[]>;
  listeners: Set<(event: Record<string, unknown>) => Promise<void>>;
}

let daemon: Daemon | undefined;
let model: FakeModel | undefined;
let dir: ReturnType<typeof createTempDir>;
beforeEach(() => {
  dir = createTempDir();
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await model?.close();
  dir.cleanup();
});

async function say(room: Room, chat: string, text: string, id: string) {
  for (const listener of room.listeners) await listener({ type: "message", id, chat, user: "alice", text });
}

async function until<T>(what: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = what();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

it("a plugin whose send throws turns only its own health red; the daemon and the other plugin keep working", async () => {
  model = await startFakeModel();
  model.script({ text: "first answer" });
  model.script({ text: "second answer" });
  const plugins = [
    { name: "broken", module: MEMORY_CHAT, allowed_users: ["alice"], options: { room: "broken-room", fail: "send" } },
    { name: "fine", module: MEMORY_CHAT, allowed_users: ["alice"], options: { room: "fine-room" } },
  ];
  const base = baseSettings(model.url);
  const config = writeConfig(dir.path, {
    ...base,
    log: { level: "silent" },
    connectors: { cli: { enabled: false }, cron: { enabled: false }, plugins },
  });
  daemon = await startDaemon(config);
  const core = daemon.core;
  await say(openRoom("broken-room"), "c1", "hello", "b1");
  const red = await waitForHealth(core, "broken");
  expect(red).toEqual({
    name: "broken",
    ok: false,
    detail: "reply failed: the room refuses messages (fail: send)",
    needsOwner: true,
    module: MEMORY_CHAT,
    version: "2.3.4",
  });
  const fine = openRoom("fine-room") as Room;
  await say(fine, "c2", "hello", "f1");
  expect(await until(() => fine.messages.get("c2")?.[0]?.text)).toBe("second answer");
  expect((await core.status()).connectors.find((c) => c.name === "fine")?.ok).toBe(true);
  await expect(core.deliver("broken:c1", "note")).rejects.toThrow(/could not deliver to broken:c1: the room refuses messages/);
});

async function waitForHealth(core: Daemon["core"], name: string) {
  const end = Date.now() + 5000;
  while (Date.now() < end) {
    const entry = (await core.status()).connectors.find((c) => c.name === name);
    if (entry && !entry.ok) return entry;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${name} never turned red`);
}

it("a scheduled job with deliver: <plugin>:<chat> lands in that chat", async () => {
  model = await startFakeModel();
  model.script({ text: "Good morning: sunny, no meetings." });
  const plugins = [{ name: "mem", module: MEMORY_CHAT, allowed_users: ["alice"], options: { room: "job-room" } }];
  const jobs = [{ name: "brief", schedule: "0 7 * * *", prompt: "brief me", deliver: "mem:kitchen" }];
  const base = baseSettings(model.url);
  const config = writeConfig(dir.path, {
    ...base,
    log: { level: "silent" },
    connectors: { cli: { enabled: false }, cron: { jobs }, plugins },
  });
  daemon = await startDaemon(config);
  const fired = await daemon.core.scheduler()?.runNow("brief");
  expect(fired?.status).toBe("ok");
  const room = openRoom("job-room") as Room;
  expect(room.messages.get("kitchen")?.map((m) => m.text)).toEqual(["Good morning: sunny, no meetings."]);
  expect(fired?.message_id).toBe(room.messages.get("kitchen")?.[0]?.id);
});

it("a message a plugin hands over that is too long is refused with a reply, once, and reaches neither the store nor the model", async () => {
  model = await startFakeModel();
  model.script({ text: "short answer" });
  const plugins = [{ name: "mem", module: MEMORY_CHAT, allowed_users: ["alice"], options: { room: "long-room" } }];
  const config = writeConfig(dir.path, {
    ...baseSettings(model.url),
    log: { level: "silent" },
    connectors: { cli: { enabled: false }, cron: { enabled: false }, plugins },
  });
  daemon = await startDaemon(config);
  const room = openRoom("long-room") as Room;
  const huge = "word ".repeat(400_000);
  await say(room, "c1", huge, "l1");
  // The network delivers it again: it was seen, so it is not answered twice.
  await say(room, "c1", huge, "l1");
  await until(() => room.messages.get("c1")?.[0]); // the refusal goes out after the message is stored
  expect(room.messages.get("c1")?.map((m) => m.text)).toEqual([
    "Your message was not read: it is 2,000,000 characters long, and hermes takes at most 1,000,000. Please send a shorter one.",
  ]);
  await say(room, "c1", "and a short one", "l2");
  expect(await until(() => room.messages.get("c1")?.[1]?.text)).toBe("short answer");
  expect(model.requests).toHaveLength(1);
  const stored = daemon.core.store.db.prepare("SELECT MAX(LENGTH(content)) FROM messages").pluck().get() as number;
  expect(stored).toBeLessThan(1000);
});

it("a message a plugin hands over while hermes stops is not taken: the plugin keeps it, and after the restart it is answered", async () => {
  model = await startFakeModel();
  let release = () => {};
  const answerLater = new Promise<void>((resolve) => {
    release = resolve;
  });
  model.script({ text: "first answer", gate: answerLater }, { text: "second answer" });
  const plugins = [{ name: "mem", module: MEMORY_CHAT, allowed_users: ["alice"], options: { room: "stop-room" } }];
  const config = writeConfig(dir.path, {
    ...baseSettings(model.url),
    log: { level: "silent" },
    connectors: { cli: { enabled: false }, cron: { enabled: false }, plugins },
  });
  daemon = await startDaemon(config);
  const room = openRoom("stop-room") as Room;
  await say(room, "c1", "first question", "s1");
  await model.waitForRequests(1);
  const stopping = daemon.stop();
  // The stop has begun (no notify socket here: nothing to wait for before the runner stops taking runs).
  await new Promise((resolve) => setImmediate(resolve));
  // Refused, so the plugin does not acknowledge it to its network.
  await expect(say(room, "c2", "second question", "s2")).rejects.toThrow(/shutting down/);
  release();
  await stopping;
  expect(room.messages.get("c1")?.map((m) => m.text)).toEqual(["first answer"]);
  daemon = await startDaemon(config);
  // The network hands it over again: it was not counted as seen.
  await say(room, "c2", "second question", "s2");
  expect(await until(() => room.messages.get("c2")?.[0]?.text)).toBe("second answer");
  expect(model.requests).toHaveLength(2);
});
