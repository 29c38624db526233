// `npm run bench`: measures hermes against fake model and chat servers on 127.0.0.1, prints a table,
// writes bench/results/latest.json, and exits 1 if a figure misses its target.
import { spawn } from "node:child_process";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { promptTokens } from "../src/agent/context.js";
import { Client } from "../src/cli/client.js";
import { TOOL_NAMES } from "../src/config/schema.js";
import { startDaemon } from "../src/daemon/daemon.js";
import { modelClient } from "../src/model/client.js";
import type { ModelClient, ModelRequest, ModelResult } from "../src/model/types.js";
import { type FakeModel, startFakeModel } from "../test/fakes/model-server.js";
import { startNotifySocket } from "../test/fakes/notify-socket.js";
import { startFakeTelegram, TOKEN } from "../test/fakes/telegram-server.js";
import { baseSettings, CLI, createTempDir, runCli, startHermes, writeConfig } from "../test/helpers/hermes.js";
import { median, openFds, percentile, round, rssMb, timesOf } from "./stats.js";

interface Figure {
  name: string;
  value: number;
  unit: string;
  target?: { op: "<=" | ">="; value: number };
  note?: string;
}

const figures: Figure[] = [];
const record = (f: Figure) => {
  figures.push(f);
  const status = !f.target ? "" : meets(f) ? "ok" : "MISSED";
  console.log(
    `  ${f.name.padEnd(44)} ${String(f.value).padStart(10)} ${f.unit.padEnd(6)} ${f.target ? `${f.target.op} ${f.target.value}` : ""} ${status}`,
  );
};
const meets = (f: Figure) => !f.target || (f.target.op === "<=" ? f.value <= f.target.value : f.value >= f.target.value);
const quiet = { log: { level: "silent" } };
const WARM_UP_TURNS = 5000;

/**
 * Variables that change what Node does at every start, dropped for the processes whose start is timed.
 * NODE_EXTRA_CA_CERTS makes Node parse a certificate bundle before any code runs (~70 ms on a machine
 * that sets it for the whole system); neither systemd nor a usual login shell sets them.
 */
const NODE_START_VARS = ["NODE_EXTRA_CA_CERTS", "NODE_OPTIONS"] as const;
const setHere = NODE_START_VARS.filter((v) => process.env[v] !== undefined);
const cleanEnv: NodeJS.ProcessEnv = Object.fromEntries(NODE_START_VARS.map((v) => [v, undefined]));

/** A model that answers instantly: first a clock call, then a reply once the result is in. */
function instantModel(): ModelClient {
  let n = 0;
  const answer = async (req: ModelRequest): Promise<ModelResult> =>
    req.messages.at(-1)?.role === "tool"
      ? { ok: true, text: "done", toolCalls: [], usage: {}, finishReason: "stop" }
      : { ok: true, text: "", toolCalls: [{ id: `c${n++}`, name: "clock", args: {} }], usage: {}, finishReason: "stop" };
  return modelClient({
    provider: "ollama",
    baseUrl: "memory",
    modelName: "instant",
    probe: async () => ({ reachable: true, modelPresent: true, detail: "in memory" }),
    prepare: (req) => () => answer(req),
  });
}

async function stepOverhead(): Promise<void> {
  const dir = createTempDir();
  const config = writeConfig(dir.path, {
    ...quiet,
    tools: { enabled: ["clock"] },
    connectors: { cli: { enabled: false }, cron: { enabled: false } },
  });
  const daemon = await startDaemon(config, { model: instantModel() });
  const ask = () => daemon.core.submit({ sessionKey: "cli:bench", text: "time?", source: "cli" }).done;
  for (let i = 0; i < 100; i++) await ask();
  const perStep: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const t = performance.now();
    await ask();
    perStep.push((performance.now() - t) / 2);
  }
  const ledgerRows = daemon.core.store.db.prepare("SELECT COUNT(*) FROM model_calls").pluck().get() as number;
  await daemon.stop();
  dir.cleanup();
  record({
    name: "step overhead p50 (clock call, persisted)",
    value: round(percentile(perStep, 50), 3),
    unit: "ms",
    target: { op: "<=", value: 1 },
  });
  record({ name: "step overhead p99", value: round(percentile(perStep, 99), 3), unit: "ms", target: { op: "<=", value: 5 } });
  // Every model call of those steps is a row in the usage ledger, written with its step.
  record({ name: "… usage ledger rows written (two per ask)", value: ledgerRows, unit: "rows", target: { op: ">=", value: 2200 } });
}

async function askRoundTripAndMemory(): Promise<void> {
  const model = await startFakeModel();
  model.respond(() => ({ text: "ok" }));
  const hermes = await startHermes({ ...baseSettings(model.url), log: { level: "info" } });
  const pid = hermes.process.pid as number;
  const askTimes = (env: NodeJS.ProcessEnv) => timesOf(50, () => runCli(["ask", "hello", "--config", hermes.configPath], { env }));
  const bareNode = (env: NodeJS.ProcessEnv) =>
    timesOf(
      20,
      () =>
        new Promise((done) => spawn(process.execPath, ["-e", "0"], { stdio: "ignore", env: { ...process.env, ...env } }).on("close", done)),
    );
  const times = await askTimes(cleanEnv);
  record({ name: "`hermes ask` round trip p50", value: round(median(times), 1), unit: "ms", target: { op: "<=", value: 120 } });
  record({ name: "`hermes ask` round trip p99", value: round(percentile(times, 99), 1), unit: "ms" });
  record({
    name: "… a bare `node -e 0`, spawned the same way, p50",
    value: round(median(await bareNode(cleanEnv)), 1),
    unit: "ms",
    note: "the floor",
  });
  if (setHere.length) {
    record({
      name: `  … ask with ${setHere.join(", ")} as set here, p50`,
      value: round(median(await askTimes({})), 1),
      unit: "ms",
      note: "Node reads it before any code runs",
    });
    record({ name: `  … bare \`node -e 0\` with it, p50`, value: round(median(await bareNode({})), 1), unit: "ms" });
  }
  await new Promise((r) => setTimeout(r, 5000));
  record({ name: "idle RSS after 5 s", value: rssMb(pid), unit: "MB", target: { op: "<=", value: 80 } });
  const client = await Client.connect(hermes.socketPath);
  const turns = async (n: number) => {
    for (let i = 0; i < n; i++) await client.stream({ op: "ask", session: `s${i % 20}`, text: `turn ${i}` }, (r) => r.type === "done");
  };
  // Warm-up: V8 sizes its heap and SQLite fills its page cache over the first few thousand turns.
  // Then 10,000 turns more, sampled every 1,000, to show that RSS levels off.
  await turns(WARM_UP_TURNS);
  const warm = rssMb(pid);
  const fdsWarm = openFds(pid);
  const series: number[] = [];
  for (let k = 0; k < 10; k++) {
    await turns(1000);
    series.push(rssMb(pid));
  }
  const after = series.at(-1) ?? Number.NaN;
  const status = (await client.call({ op: "status" })) as { data?: { memory: { heap_used_mb: number; heap_total_mb: number } } };
  client.close();
  const span = `${WARM_UP_TURNS.toLocaleString("en")} → ${(WARM_UP_TURNS + 10_000).toLocaleString("en")} turns`;
  record({
    name: `RSS after ${(WARM_UP_TURNS + 10_000).toLocaleString("en")} turns`,
    value: after,
    unit: "MB",
    note: `every 1,000 after the warm-up: ${series.join(", ")}`,
  });
  record({
    name: "  … heap used / reserved",
    value: status.data?.memory.heap_used_mb ?? Number.NaN,
    unit: "MB",
    note: `of ${status.data?.memory.heap_total_mb} MB reserved`,
  });
  record({ name: `RSS growth ${span}`, value: round(after - warm, 1), unit: "MB", target: { op: "<=", value: 20 } });
  record({ name: `open fds growth ${span}`, value: openFds(pid) - fdsWarm, unit: "fds" });
  await hermes.stop();
  await model.close();
}

async function startToReady(): Promise<void> {
  const model = await startFakeModel();
  const telegram = await startFakeTelegram();
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const dir = createTempDir();
    const notify = await startNotifySocket(dir.path);
    const config = writeConfig(dir.path, {
      ...baseSettings(model.url),
      log: { level: "info" },
      connectors: { cron: { enabled: true }, telegram: { enabled: true, token: TOKEN, allowed_users: [1], api_root: telegram.apiRoot } },
    });
    const t = performance.now();
    const child = spawn(process.execPath, [CLI, "start", "--config", config], {
      env: { ...process.env, ...cleanEnv, NOTIFY_SOCKET: notify.path },
      stdio: "ignore",
    });
    await notify.waitFor((m) => m.includes("READY=1"));
    times.push(performance.now() - t);
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    notify.close();
    dir.cleanup();
  }
  await telegram.close();
  await model.close();
  record({
    name: "start to READY=1 (CLI, Telegram, cron), median",
    value: round(median(times), 0),
    unit: "ms",
    target: { op: "<=", value: 400 },
  });
}

async function promptSize(): Promise<void> {
  const model = await startFakeModel();
  for (const [label, tools] of [
    ["default tools", undefined],
    ["every tool", [...TOOL_NAMES]],
  ] as const) {
    const settings = {
      ...baseSettings(model.url),
      ...(tools ? { tools: { enabled: tools, web_search: { url: model.url } } } : {}),
    };
    const hermes = await startHermes(settings);
    const before = model.requests.length;
    await hermes.ask("hello");
    const req = model.requests[before];
    const bytes = Buffer.byteLength(JSON.stringify({ messages: req?.messages, tools: req?.tools }));
    const tokens = promptTokens(req?.messages as never, (req?.tools ?? []).map((t) => t.function) as never);
    record({
      name: `first request for "hello", ${label}`,
      value: bytes,
      unit: "bytes",
      ...(tools ? {} : { target: { op: "<=" as const, value: 6000 } }),
    });
    record({ name: `  … estimated tokens, ${label}`, value: tokens, unit: "tokens" });
    await hermes.stop();
  }
  await model.close();
}

async function throughput(): Promise<void> {
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
  let replies = 0;
  await telegram.waitFor((c) => c.method === "sendMessage" && c.params.text === "reply" && ++replies === 500);
  const seconds = (performance.now() - t) / 1000;
  await hermes.stop();
  const db = new Database(hermes.dbPath, { readonly: true });
  const messages = db.prepare("SELECT COUNT(*) FROM messages").pluck().get() as number;
  db.close();
  const size = ["", "-wal"].reduce((sum, suffix) => sum + (statSync(hermes.dbPath + suffix, { throwIfNoEntry: false })?.size ?? 0), 0);
  const floor = await bareClientSeconds(model);
  record({ name: "100 chats × 5 messages, 20 ms model, total", value: round(seconds, 2), unit: "s", note: "ideal 10 s" });
  record({
    name: "throughput overhead over the model-bound ideal",
    value: round(((seconds - 10) / 10) * 100, 1),
    unit: "%",
    target: { op: "<=", value: 5 },
  });
  record({
    name: "… a bare HTTP client, the same 500 requests",
    value: round(floor, 2),
    unit: "s",
    note: "the floor: loopback and wake-up latency on this machine",
  });
  record({ name: "… hermes over that floor", value: round(((seconds - floor) / floor) * 100, 1), unit: "%" });
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

async function main(): Promise<void> {
  console.log(`hermes benchmark on ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}`);
  if (setHere.length) console.log(`(${setHere.join(", ")} set here: dropped for the timed starts, as under systemd)`);
  console.log("");
  const only = new Set(process.argv.slice(2));
  const parts: [string, () => Promise<void>][] = [
    ["step", stepOverhead],
    ["ask", askRoundTripAndMemory],
    ["ready", startToReady],
    ["prompt", promptSize],
    ["throughput", throughput],
  ];
  for (const [name, part] of parts) if (only.size === 0 || only.has(name)) await part();
  const out = resolve(import.meta.dirname, "../../bench/results");
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, "latest.json"),
    `${JSON.stringify({ at: new Date().toISOString(), node: process.version, cpus: cpus().length, droppedForTimedStarts: setHere, figures }, null, 2)}\n`,
  );
  const missed = figures.filter((f) => !meets(f));
  console.log(missed.length ? `\n${missed.length} target(s) missed: ${missed.map((f) => f.name).join("; ")}` : "\nall targets met");
  process.exit(missed.length ? 1 : 0);
}

void main();
