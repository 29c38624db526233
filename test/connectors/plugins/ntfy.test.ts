import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
// @ts-expect-error: the example is JavaScript without types
import { startFakeNtfy } from "../../../examples/ntfy-connector/fake-ntfy.js";
import { type Daemon, startDaemon } from "../../../src/daemon/daemon.js";
import { type FakeModel, startFakeModel } from "../../fakes/model-server.js";
import { baseSettings, createTempDir, writeConfig } from "../../helpers/hermes.js";

const NTFY = fileURLToPath(new URL("../../../examples/ntfy-connector/index.js", import.meta.url));

interface FakeNtfy {
  url: string;
  messages: { id: string; topic: string; message: string; title?: string }[];
  dropSubscribers(): void;
  close(): Promise<void>;
}

let dir: ReturnType<typeof createTempDir>;
let model: FakeModel;
let ntfy: FakeNtfy;
let daemon: Daemon | undefined;

beforeEach(async () => {
  dir = createTempDir();
  model = await startFakeModel();
  ntfy = await startFakeNtfy({ token: "secret-token" });
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await ntfy.close();
  await model.close();
  dir.cleanup();
});

async function start(token = "secret-token") {
  const plugins = [{ name: "phone", module: NTFY, allowed_users: ["alice"], options: { server: ntfy.url, topics: ["inbox"], token } }];
  const config = writeConfig(dir.path, {
    ...baseSettings(model.url),
    log: { level: "silent" },
    connectors: { cli: { enabled: false }, cron: { enabled: false }, plugins },
  });
  daemon = await startDaemon(config);
}

async function publish(text: string, title = "alice") {
  await fetch(`${ntfy.url}/inbox`, { method: "POST", headers: { Authorization: "Bearer secret-token", Title: title }, body: text });
}

async function replies(n: number): Promise<string[]> {
  const end = Date.now() + 5000;
  const mine = () => ntfy.messages.filter((m) => m.title === "hermes").map((m) => m.message);
  while (mine().length < n && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return mine();
}

it("answers on the topic, picks up again from its cursor after ntfy drops the stream, and runs nothing twice", async () => {
  model.script({ text: "first" });
  model.script({ text: "second" });
  await start();
  await publish("hello");
  expect(await replies(1)).toEqual(["first"]);
  ntfy.dropSubscribers();
  await publish("are you there?");
  expect(await replies(2)).toEqual(["first", "second"]);
  expect(model.requests.length).toBe(2);
  expect((await daemon?.core.status())?.connectors.find((c) => c.name === "phone")?.ok).toBe(true);
});

it("says in its health that ntfy refused the token", async () => {
  await start("wrong-token");
  const health = (await daemon?.core.status())?.connectors.find((c) => c.name === "phone");
  expect(health).toMatchObject({ ok: false, detail: "ntfy refused the token (401): check options.token" });
});
