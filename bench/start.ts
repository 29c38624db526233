// Start to READY=1: `hermes start` spawned as systemd runs it, timed to its READY=1 on the notify socket,
// plain, without the compile cache, with every door open and with what an owner configures.
import { spawn } from "node:child_process";
import { startFakeModel } from "../test/fakes/model-server.js";
import { startNotifySocket } from "../test/fakes/notify-socket.js";
import { startFakeTelegram, TOKEN } from "../test/fakes/telegram-server.js";
import { baseSettings, CLI, createTempDir, DAEMON_ENV, DAEMON_NODE_FLAGS, writeConfig } from "../test/helpers/hermes.js";
import { httpEnv } from "../test/helpers/http.js";
import { record, recordRatio } from "./figures.js";
import { cleanEnv, Floor } from "./floors.js";
import { everyDoor, FAKE_MCP_SERVER, OWNER_SETUP, startOwnerSetup } from "./setups.js";
import { median, round, timesOf } from "./stats.js";

/** start ≤ this many bare nodes, plain and as an owner configures it. */
const START_TARGET = 6;

/**
 * The rows above time a first start: each daemon makes its database. A restart (`systemctl restart`, every
 * boot after the first) opens the one it left, whose migrations are all applied.
 */
const RESTART = "  … a restart: the database kept";

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

/**
 * Median milliseconds from spawn to READY=1 over `n` starts of a daemon with `settings`, each in a new data
 * directory (a first start: the database is made), or with `restart` all in one whose database an untimed
 * start made (as `systemctl restart` and every boot after the first start it).
 */
async function readyMs(settings: Record<string, unknown>, env: NodeJS.ProcessEnv, floor?: Floor, n = 9, restart = false): Promise<number> {
  const kept = restart ? createTempDir() : undefined;
  if (kept) await oneStartMs(settings, env, kept.path);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    await floor?.sample();
    times.push(await oneStartMs(settings, env, kept?.path));
  }
  kept?.cleanup();
  return median(times);
}

/** Milliseconds from spawn to READY=1 of one daemon with `settings`, as systemd starts it; in `dataDir` when given. */
export async function oneStartMs(settings: Record<string, unknown>, env: NodeJS.ProcessEnv = {}, dataDir?: string): Promise<number> {
  const dir = createTempDir();
  const notify = await startNotifySocket(dir.path);
  const config = writeConfig(dataDir ?? dir.path, settings);
  const t = performance.now();
  const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, CLI, "start", "--config", config], {
    cwd: dataDir ?? dir.path,
    env: { ...process.env, ...cleanEnv, ...DAEMON_ENV, ...env, NOTIFY_SOCKET: notify.path },
    stdio: "ignore",
  });
  await notify.waitFor((m) => m.includes("READY=1"));
  const ms = performance.now() - t;
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  notify.close();
  dir.cleanup();
  return ms;
}

export async function startToReady(): Promise<void> {
  const model = await startFakeModel();
  const telegram = await startFakeTelegram();
  const owner = await startOwnerSetup();
  const settings = {
    ...baseSettings(model.url),
    log: { level: "info" },
    connectors: { cron: { enabled: true }, telegram: { enabled: true, token: TOKEN, allowed_users: [1], api_root: telegram.apiRoot } },
  };
  const floor = new Floor("ignore", DAEMON_NODE_FLAGS, DAEMON_ENV);
  const uncachedFloor = new Floor("ignore", DAEMON_NODE_FLAGS, DAEMON_ENV);
  const ownerFloor = new Floor("ignore", DAEMON_NODE_FLAGS, DAEMON_ENV);
  const restartFloor = new Floor("ignore", DAEMON_NODE_FLAGS, DAEMON_ENV);
  const ownerRestartFloor = new Floor("ignore", DAEMON_NODE_FLAGS, DAEMON_ENV);
  const base = await readyMs(settings, {}, floor);
  const restarted = await readyMs(settings, {}, restartFloor, 9, true);
  const uncached = await readyMs(settings, { HERMES_COMPILE_CACHE: "off" }, uncachedFloor);
  const door = await readyMs(everyDoor(settings, model.url), httpEnv);
  const mcpStart = await mcpServerStartMs();
  const owned = await readyMs(owner.apply(settings), owner.env, ownerFloor);
  const ownerRestarted = await readyMs(owner.apply(settings), owner.env, ownerRestartFloor, 9, true);
  await owner.close();
  await telegram.close();
  await model.close();
  recordRatio("start to READY=1 (CLI, Telegram, cron), × bare node", base, floor.ms, START_TARGET);
  recordRatio(RESTART, restarted, restartFloor.ms, START_TARGET);
  const uncachedName = "  … without the compile cache (the first start after an update)";
  record({ name: uncachedName, value: round(uncached / uncachedFloor.ms, 2), unit: "×", floor: `${round(uncached, 1)} ms` });
  record({
    name: "  … with MCP, speech and HTTP: growth",
    value: round(door - base, 0),
    unit: "ms",
    target: { op: "<=", value: mcpStart },
    floor: `${round(door, 0)} ms; the target is the MCP server's own start to its initialize answer`,
  });
  recordRatio(`  … with ${OWNER_SETUP}`, owned, ownerFloor.ms, START_TARGET);
  recordRatio(`${RESTART}, with ${OWNER_SETUP}`, ownerRestarted, ownerRestartFloor.ms, START_TARGET);
}
