// `npm run bench`: measures hermes against fake model and chat servers on 127.0.0.1, prints a table,
// writes bench/results/latest.json, and exits 1 if a figure misses its target.
import { spawn } from "node:child_process";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { Client } from "../src/cli/client.js";
import { DEFAULT_TOOLS, TOOL_NAMES } from "../src/config/schema.js";
import { startDaemon } from "../src/daemon/daemon.js";
import { modelClient } from "../src/model/client.js";
import { promptTokens } from "../src/model/tokens.js";
import type { ModelClient, ModelRequest, ModelResult } from "../src/model/types.js";
import { type FakeModel, startFakeModel } from "../test/fakes/model-server.js";
import { startNotifySocket } from "../test/fakes/notify-socket.js";
import { startFakeTelegram, TOKEN } from "../test/fakes/telegram-server.js";
import {
  baseSettings,
  CLI,
  createTempDir,
  DAEMON_NODE_FLAGS,
  type Hermes,
  runCli,
  startHermes,
  writeConfig,
} from "../test/helpers/hermes.js";
import { httpEnv, httpSettings } from "../test/helpers/http.js";
import { emailCost } from "./email.js";
import { bareNodeMs, cleanEnv, Floor, setHere, timesAbove } from "./floors.js";
import { prefill } from "./prefill.js";
import { recallBench } from "./recall.js";
import { skillsPromptSize } from "./skills.js";
import { median, openFds, percentile, round, rssMb, timesOf } from "./stats.js";

interface Figure {
  name: string;
  value: number;
  unit: string;
  target?: { op: "<=" | ">="; value: number };
  note?: string;
  /** A ratio's floor, printed next to it. */
  floor?: string;
}

const figures: Figure[] = [];
const record = (f: Figure) => {
  figures.push(f);
  const status = !f.target ? "" : meets(f) ? "ok" : "MISSED";
  console.log(
    `  ${f.name.padEnd(52)} ${String(f.value).padStart(10)} ${f.unit.padEnd(6)} ${f.target ? `${f.target.op} ${f.target.value}` : ""} ${status}${f.floor ? `  (${f.floor})` : ""}`,
  );
};
const meets = (f: Figure) => !f.target || (f.target.op === "<=" ? f.value <= f.target.value : f.value >= f.target.value);
const quiet = { log: { level: "silent" } };
const WARM_UP_TURNS = 5000;

/** Records `value` as a multiple of `floor`, with its target ratio, the absolute figure and the floor beside it. */
function recordRatio(name: string, value: number, floor: number, target: number, floorName = "bare `node -e 0`"): void {
  record({
    name,
    value: round(value / floor, 2),
    unit: "×",
    target: { op: "<=", value: target },
    floor: `${round(value, 1)} ms; ${floorName} ${floor} ms`,
  });
}

const FAKE_MCP_SERVER = resolve(import.meta.dirname, "../../test/fakes/mcp-stdio-server.mjs");
/** The MCP tools the "every door open" variant enables, beside the default tools. */
const MCP_TOOLS = ["home__read_state", "home__set_light"];

/**
 * The variant with every new door open: an MCP stdio server (two of its tools enabled), speech, and the
 * HTTP connector, on top of the given settings. Its config reads the HTTP token from `httpEnv`.
 */
function everyDoor(settings: Record<string, unknown>, modelUrl: string): Record<string, unknown> {
  const connectors = (settings.connectors ?? {}) as Record<string, unknown>;
  return {
    ...settings,
    tools: { enabled: [...DEFAULT_TOOLS, ...MCP_TOOLS] },
    mcp: { servers: { home: { command: process.execPath, args: [FAKE_MCP_SERVER] } } },
    speech: { base_url: `${modelUrl}/v1` },
    connectors: { ...connectors, http: httpSettings() },
  };
}

/** The MCP server's own start: spawn to its answer to `initialize`, median of `n`. */
async function mcpServerStartMs(n = 5): Promise<number> {
  const init = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } } })}\n`;
  const once = () =>
    new Promise<void>((done) => {
      const child = spawn(process.execPath, [FAKE_MCP_SERVER], { stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, ...cleanEnv } });
      child.stdout.once("data", () => {
        child.kill();
        done();
      });
      child.stdin.write(init);
    });
  return round(median(await timesOf(n, once)), 1);
}

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

/** `hermes ask` p50 and idle RSS of one daemon; with `door`, of the daemon with every new door open. */
async function askAndIdle(model: FakeModel, door: boolean, floor: Floor): Promise<{ askMs: number; rss: number; hermes: Hermes }> {
  const settings = { ...baseSettings(model.url), log: { level: "info" } };
  const hermes = await startHermes(door ? everyDoor(settings, model.url) : settings, { env: door ? httpEnv : {} });
  const env = { ...cleanEnv, ...(door ? httpEnv : {}) };
  const times = await timesAbove(floor, 50, () => runCli(["ask", "hello", "--config", hermes.configPath], { env }));
  await new Promise((r) => setTimeout(r, 5000));
  return { askMs: median(times), rss: rssMb(hermes.process.pid as number), hermes };
}

async function askRoundTripAndMemory(): Promise<void> {
  const model = await startFakeModel();
  model.respond(() => ({ text: "ok" }));
  // The CLI's output is piped (runCli), and so is its floor's.
  const floor = new Floor("piped");
  const doorFloor = new Floor("piped");
  const base = await askAndIdle(model, false, floor);
  const door = await askAndIdle(model, true, doorFloor);
  await door.hermes.stop();
  const hermes = base.hermes;
  const pid = hermes.process.pid as number;
  recordRatio("`hermes ask` round trip p50, × bare node", base.askMs, floor.ms, 1.6, "bare `node -e 0`, piped");
  recordRatio("  … with MCP, speech and HTTP configured", door.askMs, doorFloor.ms, 1.6, "bare `node -e 0`, piped");
  if (setHere.length) {
    const times = await timesOf(50, () => runCli(["ask", "hello", "--config", hermes.configPath], { env: {} }));
    record({
      name: `  … ask with ${setHere.join(", ")} as set here, p50`,
      value: round(median(times), 1),
      unit: "ms",
      note: "Node reads it before any code runs",
      floor: `bare \`node -e 0\` with it ${await bareNodeMs({}, "piped")} ms`,
    });
  }
  record({ name: "idle RSS after 5 s", value: base.rss, unit: "MB", target: { op: "<=", value: 64 } });
  record({
    name: "  … with MCP, speech and HTTP: growth",
    value: round(door.rss - base.rss, 1),
    unit: "MB",
    target: { op: "<=", value: 12 },
    floor: `${door.rss} MB`,
  });
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

/** Median milliseconds from spawn to READY=1 over `n` starts of a daemon with `settings`. */
async function readyMs(settings: Record<string, unknown>, env: NodeJS.ProcessEnv, floor?: Floor, n = 9): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    await floor?.sample();
    const dir = createTempDir();
    const notify = await startNotifySocket(dir.path);
    const config = writeConfig(dir.path, settings);
    const t = performance.now();
    const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, CLI, "start", "--config", config], {
      cwd: dir.path,
      env: { ...process.env, ...cleanEnv, ...env, NOTIFY_SOCKET: notify.path },
      stdio: "ignore",
    });
    await notify.waitFor((m) => m.includes("READY=1"));
    times.push(performance.now() - t);
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    notify.close();
    dir.cleanup();
  }
  return median(times);
}

async function startToReady(): Promise<void> {
  const model = await startFakeModel();
  const telegram = await startFakeTelegram();
  const settings = {
    ...baseSettings(model.url),
    log: { level: "info" },
    connectors: { cron: { enabled: true }, telegram: { enabled: true, token: TOKEN, allowed_users: [1], api_root: telegram.apiRoot } },
  };
  const floor = new Floor("ignore", DAEMON_NODE_FLAGS);
  const uncachedFloor = new Floor("ignore", DAEMON_NODE_FLAGS);
  const base = await readyMs(settings, {}, floor);
  const uncached = await readyMs(settings, { HERMES_COMPILE_CACHE: "off" }, uncachedFloor);
  const door = await readyMs(everyDoor(settings, model.url), httpEnv);
  const mcpStart = await mcpServerStartMs();
  await telegram.close();
  await model.close();
  recordRatio("start to READY=1 (CLI, Telegram, cron), × bare node", base, floor.ms, 6);
  const uncachedName = "  … without the compile cache (the first start after an update)";
  record({ name: uncachedName, value: round(uncached / uncachedFloor.ms, 2), unit: "×", floor: `${round(uncached, 1)} ms` });
  record({
    name: "  … with MCP, speech and HTTP: growth",
    value: round(door - base, 0),
    unit: "ms",
    target: { op: "<=", value: mcpStart },
    floor: `${round(door, 0)} ms; the target is the MCP server's own start to its initialize answer`,
  });
}

async function promptSize(): Promise<void> {
  const model = await startFakeModel();
  const first = async (settings: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => {
    const hermes = await startHermes(settings, { env });
    const before = model.requests.length;
    await hermes.ask("hello");
    await hermes.stop();
    const req = model.requests[before];
    const tools = req?.tools ?? [];
    const mcp = tools.filter((t) => MCP_TOOLS.includes(t.function?.name ?? ""));
    return {
      bytes: Buffer.byteLength(JSON.stringify({ messages: req?.messages, tools })),
      mcpBytes: mcp.reduce((sum, t) => sum + Buffer.byteLength(JSON.stringify(t)) + 1, 0),
      mcpCount: mcp.length,
      tokens: promptTokens(req?.messages as never, tools.map((t) => t.function) as never),
    };
  };
  const base = await first(baseSettings(model.url));
  record({ name: 'first request for "hello", default tools', value: base.bytes, unit: "bytes", target: { op: "<=", value: 4000 } });
  record({ name: "  … estimated tokens, default tools", value: base.tokens, unit: "tokens" });
  const door = await first(everyDoor(baseSettings(model.url), model.url), httpEnv);
  record({
    name: "  … with MCP, speech and HTTP: growth",
    value: door.bytes - base.bytes,
    unit: "bytes",
    target: { op: "<=", value: door.mcpCount === MCP_TOOLS.length ? door.mcpBytes : 0 },
    floor: `the target is the ${door.mcpCount} enabled MCP tools' own specs`,
  });
  const every = await first({ ...baseSettings(model.url), tools: { enabled: [...TOOL_NAMES], web_search: { url: model.url } } });
  record({ name: 'first request for "hello", every tool', value: every.bytes, unit: "bytes" });
  record({ name: "  … estimated tokens, every tool", value: every.tokens, unit: "tokens" });
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

async function main(): Promise<void> {
  console.log(`hermes benchmark on ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}`);
  if (setHere.length) console.log(`(${setHere.join(", ")} set here: dropped for the timed starts, as under systemd)`);
  console.log("");
  // The compile cache of every hermes started here, warmed by the first start of each kind (see startToReady).
  const cache = createTempDir();
  process.env.XDG_CACHE_HOME = cache.path;
  delete process.env.CACHE_DIRECTORY;
  const only = new Set(process.argv.slice(2));
  const parts: [string, () => Promise<void>][] = [
    ["step", stepOverhead],
    ["ask", askRoundTripAndMemory],
    ["ready", startToReady],
    ["prompt", promptSize],
    ["skills", () => skillsPromptSize(record)],
    ["throughput", throughput],
    ["recall", () => recallBench(record)],
    ["prefill", () => prefill(record)],
    ["email", () => emailCost(record)],
  ];
  for (const [name, part] of parts) if (only.size === 0 || only.has(name)) await part();
  cache.cleanup();
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
