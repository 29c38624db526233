import type { Logger } from "pino";
import { DEFAULT_SYSTEM_PROMPT, TokenCalibration } from "../agent/context.js";
import { Limiter } from "../agent/limiter.js";
import { Runner } from "../agent/runner.js";
import type { EventListener } from "../agent/types.js";
import { type LoadedConfig, loadConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import type { Connector, Core, DaemonStatus } from "../connector.js";
import { errorMessage, TransportError } from "../errors.js";
import { Gate } from "../gate/gate.js";
import { createLogger } from "../log.js";
import type { McpHub } from "../mcp/hub.js";
import { createModel, createModelClient } from "../model/create.js";
import type { ModelChain, ModelClient, ProbeResult, ToolSpec } from "../model/types.js";
import { skillIndexText, startSkills } from "../skills/startup.js";
import type { SkillSet } from "../skills/types.js";
import { scheduleBackups } from "../store/backup.js";
import { memoryBlock, type Person } from "../store/memory.js";
import { openStore, type Store } from "../store/store.js";
import { startOfToday } from "../store/usage.js";
import { longDateTime } from "../time.js";
import { toolSpec } from "../tools/define.js";
import { loadMcpHub, loadTools } from "../tools/registry.js";
import type { AnyTool, ToolDeps } from "../tools/types.js";
import { maskUrl } from "../url-secrets.js";
import { VERSION } from "../version.js";
import { loadConnectors, preparePluginReload, warnIfNoWorkingConnector } from "./connectors.js";
import { createModelMonitor, startHealthLoop, statusLine } from "./health.js";
import { hintedModel } from "./health-hint.js";
import { warnOfToolCost } from "./mcp-warn.js";
import { Pairings } from "./pairing.js";
import { restartKeys } from "./restart-keys.js";
import { claimInstance } from "./single-instance.js";
import { createNotifier, type Notifier } from "./systemd.js";
import { reportTools } from "./tools-report.js";

export interface Daemon {
  core: Core;
  /** Graceful stop: no new input, runs finish within the grace period, connectors close, database closes. */
  stop(): Promise<void>;
  /** Re-reads the config; an invalid one is rejected and the running one stays. */
  reload(): Promise<boolean>;
}

interface State {
  loaded: LoadedConfig;
  /** The enabled built-in (and embedder's) tools. */
  builtins: Map<string, AnyTool>;
  /** Those plus the enabled tools of MCP servers: what the gate may call. */
  tools: Map<string, AnyTool>;
  mcp?: McpHub;
  /** The tools' JSON Schemas, made at the first call (the first model request), not on the way to READY. */
  specs: () => ToolSpec[];
  model: ModelChain;
  readWindows: () => Promise<void>;
  /** `model.vision_model`'s client, when configured. */
  visionModel?: ModelClient;
  /** The skills from `skills.dirs`, when any folder of them exists. */
  skills?: SkillSet;
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

export async function startDaemon(configPath: string, options: DaemonOptions = {}): Promise<Daemon> {
  const initial = loadConfig(configPath);
  if (options.ownsProcess) process.env.TZ = initial.config.timezone;
  const log = createLogger(initial.config.log.level, initial.secrets, initial.config.log.format);
  const notifier = options.notifier ?? createNotifier();
  const now = options.now ?? (() => new Date());
  const { storage, connectors: configured } = initial.config;
  const claim = await claimInstance(storage.path, configured.cli.enabled ? configured.cli.socket : undefined);
  const store = openStore(initial.config.storage.path, { busyTimeoutMs: initial.config.storage.busy_timeout_ms });
  let connectors: Connector[] = [];
  const deliver = (target: string, text: string) => deliverTo(connectors, target, text);
  const mcpStarted = Date.now();
  const state: State = {
    loaded: initial,
    mcp: await loadMcpHub(initial.config, { store, log, locate: initial.locate }),
    ...(await buildParts(initial.config, { store, now, deliver }, log, options.extraTools, options.model)),
  };
  withMcpTools(state);
  state.mcp?.onChange(() => withMcpTools(state));
  // Servers connect in the background, not on the way to READY; a run waits for their tool lists (~3 s
  // from the start at most), so that the first request has their tools.
  const mcpTools = state.mcp?.settled(Math.max(0, 3000 - (Date.now() - mcpStarted))) ?? Promise.resolve();
  const config = () => state.loaded.config;
  const limiter = new Limiter(initial.config.model.concurrency);
  const missing = (name: string) => state.mcp?.whyMissing(name, config().tools.enabled);
  const gate = new Gate({ store, tools: () => state.tools, config, missing });
  const startedAt = Date.now();
  /** Settings changed by reloads that only a restart applies (compared with the config the daemon started with). */
  let waitingForRestart: string[] = [];
  const modelMonitor = createModelMonitor(() => state.model, log);
  const media = reusedFor(MEDIA_STATUS_MS, () => mediaStatus(state));
  const runner = new Runner({
    store,
    gate,
    limiter,
    config,
    log,
    model: hintedModel(() => state.model, modelMonitor),
    visionModel: () => state.visionModel,
    systemPrompt: (sender) =>
      systemPrompt(config(), store, state.tools.has("memory"), sender, skillIndexText(state.skills, state.tools.has("skill"))),
    toolSpecs: () => state.specs(),
    toolsKnown: () => mcpTools,
    calibration: new TokenCalibration({ load: (m) => store.memory.loadRatio(m), save: (m, r) => store.memory.saveRatio(m, r) }),
    timeNote: () => timeNote(now(), config().timezone),
    fallbackListener: (channel) => listenerFor(connectors, channel),
  });

  let reloadDaemon = async () => false;
  const core: Core = {
    submit: (req) => runner.submit(req),
    stop: (key) => runner.stop(key),
    newSession: (key) => runner.newSession(key),
    compact: (key) => runner.compact(key),
    decide: (id, approve, by) => runner.decide(id, approve, by),
    status: async () => ({
      ...statusOf(state, runner, connectors, startedAt, await modelMonitor.get(), store),
      ...(waitingForRestart.length > 0 && { restart_needed_for: waitingForRestart }),
      ...(await media()),
    }),
    tools: () => reportTools(state.tools.values(), config()),
    toolsKnown: () => mcpTools,
    deliver,
    listenerFor: (channel) => listenerFor(connectors, channel),
    scheduler: () => connectors.find((c) => c.scheduler)?.scheduler,
    config,
    skills: () => state.skills,
    store,
    log,
    reload: () => reloadDaemon(),
    pairings: new Pairings(),
  };

  runner.recover();
  try {
    connectors = await loadConnectors(core, initial.config, initial);
    for (const c of connectors) await c.start();
    warnIfNoWorkingConnector(connectors, log);
    runner.connectorsReady();
  } catch (err) {
    await Promise.allSettled(connectors.map((c) => c.stop()));
    await state.mcp?.close();
    store.close();
    claim.release();
    throw err;
  }
  modelMonitor.start();
  void state.readWindows();
  await notifier.ready(statusLine(connectors, modelMonitor));
  const makeSpecs = () => {
    try {
      state.specs(); // made now, before the first message needs them
      if (state.mcp) warnOfToolCost(state.specs(), state.mcp.reports(), config().model.context_tokens, log);
    } catch {
      // A tool whose schema cannot be made fails the first run that needs it, which logs why.
    }
  };
  setImmediate(() => void mcpTools.then(makeSpecs));
  const health = startHealthLoop({ connectors: () => connectors, notifier, model: modelMonitor, log });
  let backups = startBackups(store, config(), log);
  log.info(
    { version: VERSION, config: configPath, connectors: connectors.map((c) => c.name), tools: [...state.tools.keys()] },
    "hermes is ready",
  );

  let stopping: Promise<void> | undefined;
  /** One reload at a time: a second SIGHUP waits for the plugins the first one starts and stops. */
  let reloads = Promise.resolve(true);
  const daemon: Daemon = {
    core,
    stop: () => {
      stopping ??= (async () => {
        await notifier.stopping();
        health.stop();
        modelMonitor.stop();
        state.model.stop();
        backups.stop();
        const graceS = config().agent.shutdown_grace_s;
        log.info({ graceS }, "stopping: no new input; letting runs finish");
        await runner.shutdown(graceS * 1000);
        await Promise.allSettled([...connectors.map((c) => c.stop()), state.mcp?.close()]);
        store.close();
        claim.release();
        log.info("stopped");
      })();
      return stopping;
    },
    reload: () => {
      reloads = reloads.then(reloadNow, reloadNow);
      return reloads;
    },
  };
  async function reloadNow(): Promise<boolean> {
    log.info({ config: configPath }, "reloading the config");
    await notifier.reloading();
    let outcome = "";
    try {
      const next = loadConfig(configPath);
      const plugins = await preparePluginReload(core, state.loaded.config, next);
      const parts = await buildParts(next.config, { store, now, deliver }, log, options.extraTools, options.model);
      state.model.stop();
      const previous = state.mcp;
      const mcp = await loadMcpHub(next.config, { store, log, locate: next.locate });
      Object.assign(state, { loaded: next, ...parts, mcp });
      withMcpTools(state);
      mcp?.onChange(() => state.mcp === mcp && withMcpTools(state));
      void previous?.close();
      void state.readWindows();
      limiter.setLimit(next.config.model.concurrency);
      backups.stop();
      backups = startBackups(store, next.config, log);
      modelMonitor.start();
      log.level = next.config.log.level;
      for (const c of connectors) c.reload?.(next.config);
      if (plugins) {
        connectors = await plugins.apply(connectors);
        warnIfNoWorkingConnector(connectors, log);
      }
      waitingForRestart = restartKeys(initial.config, next.config);
      log.info({ tools: [...state.tools.keys()], ...(plugins && { plugins: plugins.changes }) }, "config reloaded");
      if (waitingForRestart.length > 0) log.warn({ keys: waitingForRestart }, "some changes take effect only after a restart");
      return true;
    } catch (err) {
      log.error({ detail: errorMessage(err) }, "config reload rejected; keeping the running config");
      outcome = "; config reload refused (see the log)";
      return false;
    } finally {
      // systemd holds the unit in "reloading" (and queues the next reload) until READY=1, taken or refused.
      const restart = waitingForRestart.length > 0 ? `; restart needed for ${waitingForRestart.join(", ")}` : "";
      await notifier.ready(statusLine(connectors, modelMonitor) + outcome + restart);
    }
  }
  reloadDaemon = daemon.reload;
  return daemon;
}

async function buildParts(config: Config, deps: Omit<ToolDeps, "config">, log: Logger, extra: AnyTool[] = [], model?: ModelClient) {
  const skills = await startSkills(config, log);
  const { tools, unavailable } = await loadTools(config.tools.enabled, { ...deps, config, skills: () => skills }, extra);
  // With nothing to read, the tool would only cost the prompt its signature.
  if (!skills?.skills.some((s) => !s.hiddenFromModel)) tools.delete("skill");
  if (unavailable.length) log.warn({ tools: unavailable }, "enabled tools that this version does not provide are skipped");
  let specs: ToolSpec[] | undefined;
  const usedToday = (endpoint: string) => deps.store.usage.endpointTokensSince(endpoint, startOfToday());
  const parts = await createModel(config.model, { usedToday, log, client: model });
  return {
    builtins: tools,
    tools,
    specs: () => (specs ??= [...tools.values()].map(toolSpec)),
    model: parts.chain,
    readWindows: parts.readWindows,
    visionModel: config.model.vision_model ? await createModelClient({ ...config.model, name: config.model.vision_model }) : undefined,
    skills,
  };
}

/** Adds the MCP servers' enabled tools to the built-in ones; called again whenever a server's list changes. */
function withMcpTools(state: State): void {
  if (!state.mcp) return;
  const tools = new Map(state.builtins);
  for (const tool of state.mcp.tools()) if (!tools.has(tool.name)) tools.set(tool.name, tool);
  let specs: ToolSpec[] | undefined;
  state.tools = tools;
  state.specs = () => (specs ??= [...tools.values()].map(toolSpec));
}

/** The fixed prompt, the skill index (changed only by a reload), then memories (which change more often): the stable part first. */
function systemPrompt(config: Config, store: Store, withMemory: boolean, sender?: Person, skillIndex = ""): string {
  const base = config.agent.system_prompt ?? DEFAULT_SYSTEM_PROMPT;
  const memories = withMemory ? memoryBlock(store.memory.visibleTo(sender?.id), 2000, sender) : "";
  return [base, skillIndex, memories].filter(Boolean).join("\n\n");
}

function startBackups(store: Store, config: Config, log: Logger): { stop(): void } {
  const settings = config.storage.backup;
  return settings ? scheduleBackups(store.db, settings, config.timezone, log) : { stop() {} };
}

async function deliverTo(connectors: Connector[], target: string, text: string): Promise<{ messageId: string }> {
  const prefix = target.split(":")[0];
  const connector = connectors.find((c) => c.name === prefix && c.deliver);
  if (!connector?.deliver) throw new TransportError(prefix ?? target, `no enabled connector delivers to ${target}`);
  return connector.deliver(target, text);
}

function listenerFor(connectors: Connector[], channel: string): EventListener | undefined {
  const prefix = channel.split(":")[0];
  return connectors.find((c) => c.name === prefix)?.listenerFor?.(channel);
}

function usageToday(config: Config, store: Store) {
  const [t] = store.usage.totals(startOfToday());
  const limits = [config.model, ...config.model.fallbacks].filter((e) => e.daily_tokens > 0);
  return {
    calls: t?.calls ?? 0,
    prompt_tokens: t?.prompt_tokens ?? 0,
    output_tokens: t?.output_tokens ?? 0,
    estimated_calls: t?.estimated ?? 0,
    daily_limits: limits.map((e) => ({
      endpoint: maskUrl(e.base_url),
      daily_tokens: e.daily_tokens,
      used: store.usage.endpointTokensSince(e.base_url, startOfToday()),
    })),
  };
}

function statusOf(
  state: State,
  runner: Runner,
  connectors: Connector[],
  startedAt: number,
  probe: ProbeResult,
  store: Store,
): DaemonStatus {
  const runs = runner.status();
  return {
    version: VERSION,
    pid: process.pid,
    uptime_s: Math.round((Date.now() - startedAt) / 1000),
    connectors: connectors.map((c) => ({ name: c.name, ...c.health(), ...c.plugin })),
    model: {
      provider: state.model.provider,
      base_url: maskUrl(state.model.baseUrl),
      name: state.model.modelName,
      reachable: probe.reachable,
      detail: probe.detail,
    },
    serving: ((s) => ({ ...s, endpoint: maskUrl(s.endpoint) }))(state.model.serving()),
    usage_today: usageToday(state.loaded.config, store),
    runs: { running: runs.running, queued: runs.queued, suspended: runs.suspended },
    pending_approvals: runs.pendingApprovals,
    memory: memoryOf(process.memoryUsage()),
    ...(state.mcp ? { mcp: state.mcp.reports() } : {}),
  };
}

/** How long one look at the speech endpoint and vision serves `status` calls (so a busy dashboard does not probe each time). */
const MEDIA_STATUS_MS = 15_000;

/** The same answer for `ms` after it was asked for. */
function reusedFor<T>(ms: number, ask: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (!last || Date.now() - last.at > ms) last = { at: Date.now(), value: ask() };
    return last.value;
  };
}

/** Speech and vision, for `hermes status`: loaded only when asked. */
async function mediaStatus(state: State): Promise<Pick<DaemonStatus, "speech" | "vision">> {
  const { checkSpeech, checkVision } = await import("../media/checks.js");
  const config = state.loaded.config;
  const [speech, vision] = await Promise.all([
    checkSpeech(config, AbortSignal.timeout(3000)),
    checkVision(config, state.model, state.visionModel, AbortSignal.timeout(3000)),
  ]);
  return { speech: { ok: speech.ok, detail: speech.detail }, vision: { ok: vision.ok === true, detail: vision.detail } };
}

/** What `hermes status --json` says of memory: the process, V8's heap (used and reserved), and buffers outside it. */
function memoryOf(m: NodeJS.MemoryUsage) {
  return { rss_mb: mb(m.rss), heap_used_mb: mb(m.heapUsed), heap_total_mb: mb(m.heapTotal), external_mb: mb(m.external) };
}

function mb(bytes: number): number {
  return Math.round((bytes / 1048576) * 10) / 10;
}

export function timeNote(now: Date, timeZone: string): string {
  return `Current time: ${longDateTime(now, timeZone)} (${timeZone})`;
}
