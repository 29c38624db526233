// Throughput: 100 Telegram chats × 5 messages against a 20 ms model, over a bare HTTP client that replays
// the same 500 requests (the machine's floor), and what the store holds after it.
import { spawn } from "node:child_process";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { type FakeModel, startFakeModel } from "../test/fakes/model-server.js";
import { type Call, startFakeTelegram, TOKEN } from "../test/fakes/telegram-server.js";
import { baseSettings, createTempDir, startHermes } from "../test/helpers/hermes.js";
import { record } from "./figures.js";
import { cleanEnv } from "./floors.js";
import { round } from "./stats.js";

export async function throughput(): Promise<void> {
  const model = await startFakeModel();
  model.respond(() => ({ text: "reply", delayMs: 20 }));
  const telegram = await startFakeTelegram();
  const chats = Array.from({ length: 100 }, (_, i) => 1000 + i);
  const hermes = await startHermes({
    ...baseSettings(model.url),
    log: { level: "info" },
    connectors: {
      cron: { enabled: false },
      telegram: { enabled: true, token: TOKEN, allowed_users: chats, api_root: telegram.apiRoot, stream_replies: false },
    },
  });
  await telegram.waitFor((c) => c.method === "getUpdates");
  const t = performance.now();
  for (let round = 0; round < 5; round++) for (const chat of chats) telegram.sendText(chat, `message ${round}`);
  // The fake looks through its calls again at each new one: the 500th reply is waited for one reply after another.
  const isReply = (c: Call) => c.method === "sendMessage" && c.params.text === "reply";
  for (let n = 0, from = 0; n < 500; n++) from = telegram.calls.indexOf(await telegram.waitFor(isReply, from)) + 1;
  const seconds = (performance.now() - t) / 1000;
  await hermes.stop();
  const db = new Database(hermes.dbPath, { readonly: true });
  const messages = db.prepare("SELECT COUNT(*) FROM messages").pluck().get() as number;
  db.close();
  const size = ["", "-wal"].reduce((sum, suffix) => sum + (statSync(hermes.dbPath + suffix, { throwIfNoEntry: false })?.size ?? 0), 0);
  const floor = await bareClientSeconds(model);
  record({ name: "100 chats × 5 messages, 20 ms model, total", value: round(seconds, 2), unit: "s", note: "ideal 10 s" });
  record({
    name: "throughput: hermes over the bare-client floor",
    value: round(((seconds - floor) / floor) * 100, 1),
    unit: "%",
    target: { op: "<=", value: 3 },
    floor: `bare HTTP client, the same 500 requests, ${round(floor, 2)} s`,
  });
  record({
    name: "  … over the model-bound ideal of 10 s, for reference",
    value: round(((seconds - 10) / 10) * 100, 1),
    unit: "%",
    note: "the floor adds this machine's loopback and wake-up latency to the ideal",
  });
  record({ name: "messages persisted per second under that load", value: round(messages / seconds, 0), unit: "msg/s" });
  record({ name: "database size after it", value: round(size / 1048576, 2), unit: "MB" });
  await telegram.close();
  await model.close();
}

/** Sends the request bodies hermes sent to the fake model again, from a bare client in its own process. */
async function bareClientSeconds(model: FakeModel): Promise<number> {
  const dir = createTempDir();
  const file = join(dir.path, "bodies.ndjson");
  writeFileSync(file, `${model.requests.map((r) => JSON.stringify(r.body)).join("\n")}\n`);
  const child = spawn(process.execPath, [join(import.meta.dirname, "bare-client.js"), `${model.url}/api/chat`, file], {
    env: { ...process.env, ...cleanEnv },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  await new Promise((done) => child.on("close", done));
  dir.cleanup();
  return (JSON.parse(out) as { seconds: number }).seconds;
}
