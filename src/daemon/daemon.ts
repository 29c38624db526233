import { TokenCalibration } from "../agent/context.js";
import { Limiter } from "../agent/limiter.js";
import { Runner } from "../agent/runner.js";
import type { EventListener } from "../agent/types.js";
import { type LoadedConfig, loadConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { processZone } from "../config/zones.js";
import type { Connector, Core, DeliverOptions } from "../connector.js";
import { ConfigError, errorMessage, TransportError } from "../errors.js";
import { Approvals } from "../gate/approvals.js";
import { Gate } from "../gate/gate.js";
import { addLogSecrets, createLogger, type Logger } from "../log.js";
import type { ModelClient } from "../model/types.js";
import { Pairings } from "../pairing.js";
import { scheduleBackups } from "../store/backup.js";
import { openStore, type Store } from "../store/store.js";
import { longDateTime } from "../time.js";
import type { AnyTool } from "../tools/types.js";
import { VERSION } from "../version.js";
import { loadConnectors, preparePluginReload, warnIfNoWorkingConnector } from "./connectors.js";
import { createModelMonitor, type ModelMonitor, startHealthLoop, statusLine } from "./health.js";
import { hintedModel } from "./health-hint.js";
import { loadMcpHub } from "./mcp-hub.js";
import { warnOfToolCost } from "./mcp-warn.js";
import { buildParts, loadState, type PartsDeps, type State, withMcpTools } from "./parts.js";
import { promptFor, warnOfSmallRoom } from "./prompt.js";
import { restartKeys } from "./restart-keys.js";
import { claimInstance, type InstanceClaim } from "./single-instance.js";
import { MEDIA_STATUS_MS, mediaStatus, reusedFor, statusOf } from "./status.js";
import { createNotifier, type Notifier } from "./systemd.js";
import { reportTools } from "./tools-report.js";

export interface Daemon {
  core: Core;
  /** Graceful stop: no new input, runs finish within the grace period, connectors close, database closes. */
  stop(): Promise<void>;
  /** Re-reads the config; an invalid one is rejected and the running one stays. */
  reload(): Promise<boolean>;
}

export interface DaemonOptions {
  notifier?: Notifier;
  now?: () => Date;
  /** Tools added to the enabled ones, for embedding hermes (and for tests that need instrumented tools). */
  extraTools?: AnyTool[];
  /** A model client to use instead of the configured endpoint (embedding; the benchmark's instant model). */
  model?: ModelClient;
  /**
   * Run the whole process in the configured zone (TZ), so that local times need no Intl (see time.ts).
   * For the `hermes start` process; not for a daemon that shares its process with other code. Set once:
   * the schedules made in it count in local time, so a zone changed by a reload goes through Intl.
   */
  ownsProcess?: boolean;
}

/** What the first phase opens: the config it started with, the log, the instance claim and the store. */
interface Base {
  configPath: string;
  initial: LoadedConfig;
  log: Logger;
  notifier: Notifier;
  now: () => Date;
  claim: InstanceClaim;
  store: Store;
  /** Started in the fourth phase; the core's `deliver` and `listenerFor` look here. */
  connectors: Connector[];
  partsDeps: PartsDeps;
}

/** What the later phases share: the state a reload replaces, the core and what runs behind it. */
interface Wired extends Base {
  state: State;
  config: () => Config;
  /** Resolves once the MCP servers listed their tools, or ~3 s after the start passed. */
  mcpTools: Promise<void>;
  limiter: Limiter;
  runner: Runner;
  modelMonitor: ModelMonitor;
  core: Core;
  /** Settings changed by reloads that only a restart applies (compared with the config the daemon started with). */
  waitingForRestart: string[];
  /** What the core's `reload` calls: set once the daemon is running. */
  reloadDaemon: () => Promise<boolean>;
}

export async function startDaemon(configPath: string, options: DaemonOptions = {}): Promise<Daemon> {
  const base = await openStorage(configPath, options);
  const wired = buildCore(base, await buildTools(base));
  await startConnectors(wired);
  const running = await announceReady(wired);
  /** One reload at a time: a second SIGHUP waits for the plugins the first one starts and stops. */
  let reloads = Promise.resolve(true);
  let stopping = false;
  const reloadOnce = () => reload(wired, running);
  wired.reloadDaemon = () => {
    // Once the stop has begun a reload would start again what it stops (and tell systemd READY=1 after
    // STOPPING=1): it is ignored. A reload under way when the stop comes is finished first.
    if (stopping) {
      wired.log.info("reload ignored: hermes is stopping");
      return Promise.resolve(false);
    }
    reloads = reloads.then(reloadOnce, reloadOnce);
    return reloads;
  };
  const stopAll = stopOnce(wired, running);
  const stopDaemon = async () => {
    stopping = true;
    await reloads.catch(() => false);
    return stopAll();
  };
  return { core: wired.core, stop: stopDaemon, reload: wired.reloadDaemon };
}

/** Phase 1: the config, the log, this data directory claimed for one daemon, and the store opened. */
async function openStorage(configPath: string, options: DaemonOptions): Promise<Base> {
  const initial = loadConfig(configPath);
  if (options.ownsProcess) process.env.TZ = processZone(initial.config.timezone);
  const log = createLogger(initial.config.log.level, initial.secrets, initial.config.log.format);
  const now = options.now ?? (() => new Date());
  const { storage, connectors: configured } = initial.config;
  const claim = await claimInstance(storage.path, configured.cli.enabled ? configured.cli.socket : undefined);
  const store = openStore(storage.path, { busyTimeoutMs: storage.busy_timeout_ms });
  const base = { configPath, initial, log, notifier: options.notifier ?? createNotifier(), now, claim, store, connectors: [] };
  const deliver = (target: string, text: string) => deliverTo(base.connectors, target, text);
  const canDeliver = (target: string) => deliveringConnector(base.connectors, target) !== undefined;
  return { ...base, partsDeps: { tools: { store, now, deliver, canDeliver }, log, extraTools: options.extraTools, model: options.model } };
}

/** Phase 2: the tools, the model and the skills; MCP servers connect in the background. */
async function buildTools(base: Base): Promise<{ state: State; mcpTools: Promise<void> }> {
  const mcpStarted = Date.now();
  const state = await loadState(base.initial, base.partsDeps);
  // Servers connect in the background, not on the way to READY; a run waits for their tool lists (~3 s
  // from the start at most), so that the first request has their tools.
  const mcpTools = state.mcp?.settled(Math.max(0, 3000 - (Date.now() - mcpStarted))) ?? Promise.resolve();
  return { state, mcpTools };
}

/** Phase 3: the approvals, the gate, the runner and the core the connectors talk to. */
function buildCore(base: Base, built: { state: State; mcpTools: Promise<void> }): Wired {
  const { store, log, now, connectors } = base;
  const { state, mcpTools } = built;
  const config = () => state.loaded.config;
  const limiter = new Limiter(base.initial.config.model.concurrency);
  const missing = (name: string) => state.mcp?.whyMissing(name, config().tools.enabled);
  const approvals = new Approvals({ store, config, log });
  const gate = new Gate({ store, approvals, tools: () => state.tools, config, missing });
  // A model that was down at start told no context window then: it is read when the model is back.
  const modelMonitor = createModelMonitor(
    () => state.model,
    log,
    () => void state.readWindows(),
  );
  const runner = new Runner({
    store,
    gate,
    approvals,
    limiter,
    config,
    log,
    model: hintedModel(() => state.model, modelMonitor),
    visionModel: () => state.visionModel,
    prompt: (sender, group) => promptFor(config(), store, state, sender, group),
    toolSpecs: () => state.specs(),
    toolsKnown: () => mcpTools,
    calibration: new TokenCalibration({ load: (m) => store.memory.loadRatio(m), save: (m, r) => store.memory.saveRatio(m, r) }),
    timeNote: () => timeNote(now(), config().timezone),
    fallbackListener: (channel, replyTo) => listenerFor(connectors, channel, replyTo),
  });
  const reloadDaemon = async () => false;
  const wiring = { ...base, state, config, mcpTools, limiter, runner, modelMonitor, waitingForRestart: [], reloadDaemon };
  return Object.assign(wiring, { core: coreOf(wiring, approvals) });
}

function coreOf(w: Omit<Wired, "core">, approvals: Approvals): Core {
  const startedAt = Date.now();
  const media = reusedFor(MEDIA_STATUS_MS, () => mediaStatus(w.state));
  const { runner, connectors, store } = w;
  return {
    submit: (req) => runner.submit(req),
    stop: (key) => runner.stop(key),
    stopRun: (runId) => runner.stopRun(runId),
    newSession: (key) => runner.newSession(key),
    compact: (key) => runner.compact(key),
    decide: (id, approve, by) => approvals.decide(id, approve, by),
    status: async () => ({
      ...statusOf(w.state, runner, connectors, startedAt, await w.modelMonitor.get(), store),
      ...(w.waitingForRestart.length > 0 && { restart_needed_for: w.waitingForRestart }),
      ...(await media()),
    }),
    tools: () => reportTools(w.state.tools.values(), w.config()),
    toolsKnown: () => w.mcpTools,
    deliver: (target, text, options) => deliverTo(connectors, target, text, options),
    listenerFor: (channel) => listenerFor(connectors, channel),
    scheduler: () => connectors.find((c) => c.scheduler)?.scheduler,
    config: w.config,
    skills: () => w.state.skills,
    store,
    log: w.log,
    reload: () => w.reloadDaemon(),
    pairings: new Pairings(),
  };
}

/** Phase 4: recovered runs wait while the connectors start; a connector that cannot start undoes the start. */
async function startConnectors(w: Wired): Promise<void> {
  w.runner.recover();
  try {
    w.connectors.push(...(await loadConnectors(w.core, w.initial.config, w.initial)));
    await startAll(w.connectors);
    warnIfNoWorkingConnector(w.connectors, w.log);
    w.runner.connectorsReady();
  } catch (err) {
    await Promise.allSettled(w.connectors.map((c) => c.stop()));
    await w.state.mcp?.close();
    w.store.close();
    w.claim.release();
    throw err;
  }
}

/**
 * The connectors start side by side (a plugin's first round trip overlaps Telegram's), the schedules last:
 * a job that missed its time while hermes was down fires at start and may deliver to any of the others.
 * The first failure is thrown once every start has settled.
 */
async function startAll(connectors: Connector[]): Promise<void> {
  const scheduled = connectors.filter((c) => c.scheduler);
  const rest = connectors.filter((c) => !c.scheduler);
  for (const group of [rest, scheduled]) {
    const failed = (await Promise.allSettled(group.map((c) => c.start()))).find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  }
}

/** What runs once the daemon is ready: the health loop and the backups (which a reload restarts). */
interface Running {
  health: { stop(): void };
  backups: { stop(): void };
}

/** Phase 5: READY to systemd, the tool schemas made in the background, the health loop and the backups started. */
async function announceReady(w: Wired): Promise<Running> {
  const { connectors, modelMonitor, notifier, log } = w;
  modelMonitor.start();
  void w.state.readWindows();
  await notifier.ready(statusLine(connectors, modelMonitor));
  setImmediate(() => void w.mcpTools.then(() => makeSpecs(w)));
  const health = startHealthLoop({ connectors: () => connectors, notifier, model: modelMonitor, log });
  const backups = startBackups(w.store, w.config(), log);
  log.info(
    { version: VERSION, config: w.configPath, connectors: connectors.map((c) => c.name), tools: [...w.state.tools.keys()] },
    "hermes is ready",
  );
  return { health, backups };
}

/** The tool schemas, made before the first message needs them; a warning when they (MCP's, or all with the system prompt) crowd the prompt. */
function makeSpecs(w: Wired): void {
  try {
    const specs = w.state.specs();
    const { model } = w.config();
    if (w.state.mcp) warnOfToolCost(specs, w.state.mcp.reports(), model.context_tokens, w.log);
    warnOfSmallRoom(promptFor(w.config(), w.store, w.state).system, specs, model.context_tokens, model.max_output_tokens, w.log);
  } catch {
    // A tool whose schema cannot be made fails the first run that needs it, which logs why.
  }
}

/** The graceful stop, done once however often it is asked for. */
function stopOnce(w: Wired, running: Running): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= stop(w, running);
    return stopping;
  };
}

async function stop(w: Wired, running: Running): Promise<void> {
  const { log } = w;
  await w.notifier.stopping();
  running.health.stop();
  w.modelMonitor.stop();
  w.state.model.stop();
  running.backups.stop();
  const graceS = w.config().agent.shutdown_grace_s;
  log.info({ graceS }, "stopping: no new input; letting runs finish");
  await w.runner.shutdown(graceS * 1000);
  await Promise.allSettled([...w.connectors.map((c) => c.stop()), w.state.mcp?.close()]);
  w.store.close();
  w.claim.release();
  log.info("stopped");
}

/** Re-reads the config file; the new parts replace the running ones only when all of them could be made. */
async function reload(w: Wired, running: Running): Promise<boolean> {
  const { log } = w;
  log.info({ config: w.configPath }, "reloading the config");
  await w.notifier.reloading();
  let outcome = "";
  try {
    const loaded = await loadParts(w);
    applyConfig(w, running, loaded);
    if (loaded.plugins) {
      // The same array the core's deliver and listenerFor read.
      w.connectors.splice(0, w.connectors.length, ...(await loaded.plugins.apply([...w.connectors])));
      warnIfNoWorkingConnector(w.connectors, log);
    }
    log.info({ tools: [...w.state.tools.keys()], ...(loaded.plugins && { plugins: loaded.plugins.changes }) }, "config reloaded");
    if (w.waitingForRestart.length > 0) log.warn({ keys: w.waitingForRestart }, "some changes take effect only after a restart");
    return true;
  } catch (err) {
    log.error({ detail: errorMessage(err) }, "config reload rejected; keeping the running config");
    outcome = "; config reload refused (see the log)";
    return false;
  } finally {
    // systemd holds the unit in "reloading" (and queues the next reload) until READY=1, taken or refused.
    const restart = w.waitingForRestart.length > 0 ? `; restart needed for ${w.waitingForRestart.join(", ")}` : "";
    await w.notifier.ready(statusLine(w.connectors, w.modelMonitor) + outcome + restart);
  }
}

/** The parts of the config file as it is now; the running model stops once they are made. */
async function loadParts(w: Wired) {
  const next = loadConfig(w.configPath);
  // A file emptied by a save cut short would put every setting back to its default: the model, the chats, the tools.
  if (next.empty)
    throw new ConfigError([
      {
        file: next.file,
        line: 1,
        col: 1,
        path: "",
        message: "the file is empty; a reload keeps the running config (a restart would run on the defaults)",
      },
    ]);
  // The new plugin modules load before anything changes: a broken entry refuses the whole reload.
  const plugins = await preparePluginReload(w.core, w.state.loaded.config, next);
  const parts = await buildParts(next.config, w.partsDeps);
  // Last, for nothing after it refuses the reload: it takes over the unchanged servers from the running hub.
  const mcp = await loadMcpHub(next.config, { store: w.store, log: w.log, locate: next.locate, secrets: next.secrets }, w.state.mcp);
  // Stopped only once nothing can refuse the reload any more: a refused one keeps the running model whole.
  w.state.model.stop();
  return { next, parts, mcp, plugins };
}

function applyConfig(w: Wired, running: Running, { next, parts, mcp }: Awaited<ReturnType<typeof loadParts>>): void {
  const { state } = w;
  const previous = state.mcp;
  Object.assign(state, { loaded: next, ...parts, mcp });
  withMcpTools(state);
  mcp?.onChange(() => state.mcp === mcp && withMcpTools(state));
  void previous?.close();
  void state.readWindows();
  w.limiter.setLimit(next.config.model.concurrency);
  running.backups.stop();
  running.backups = startBackups(w.store, next.config, w.log);
  w.modelMonitor.start();
  w.log.level = next.config.log.level;
  addLogSecrets(w.log, next.secrets);
  for (const c of w.connectors) c.reload?.(next.config);
  w.waitingForRestart = restartKeys(w.initial.config, next.config);
}

function startBackups(store: Store, config: Config, log: Logger): { stop(): void } {
  const settings = config.storage.backup;
  return settings ? scheduleBackups(store.db, settings, config.timezone, log) : { stop() {} };
}

async function deliverTo(connectors: Connector[], target: string, text: string, options?: DeliverOptions): Promise<{ messageId: string }> {
  const connector = deliveringConnector(connectors, target);
  if (!connector?.deliver) throw new TransportError(target.split(":")[0] ?? target, `no enabled connector delivers to ${target}`);
  return connector.deliver(target, text, options);
}

function deliveringConnector(connectors: Connector[], target: string): Connector | undefined {
  const prefix = target.split(":")[0];
  return connectors.find((c) => c.name === prefix && c.deliver);
}

function listenerFor(connectors: Connector[], channel: string, replyTo?: string): EventListener | undefined {
  const prefix = channel.split(":")[0];
  return connectors.find((c) => c.name === prefix)?.listenerFor?.(channel, replyTo);
}

export function timeNote(now: Date, timeZone: string): string {
  return `Current time: ${longDateTime(now, timeZone)} (${timeZone})`;
}
