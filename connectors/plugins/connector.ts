import type { Connector, ConnectorHealth, Core } from "../../src/connector.js";
import { errorMessage } from "../../src/errors.js";
import { PluginStore } from "../../src/store/plugins.js";
import { createChatFlow } from "../chat/flow.js";
import type { ChatFlow, ChatSurface } from "../chat/types.js";
import type { ConnectorHost, OutboundMessage, Connector as PluginInstance } from "../sdk/types.js";
import { asHermes, asPlugin, type Escape, retirePlugin, watchPlugin } from "./faults.js";
import type { LoadedPlugin } from "./load.js";

/** What a plugin's message may hold when it declares no `limits.text`. */
const DEFAULT_TEXT_LIMIT = 4000;
/** How long hermes waits on a plugin's calls (the tests shorten them). */
export const PLUGIN_WAITS = {
  /** A plugin whose start has not settled by then is left starting: the daemon and the other connectors go on. */
  startMs: 10_000,
  /** A plugin's stop that has not settled by then is left: the daemon's stop or reload goes on without it. */
  stopMs: 5_000,
  /**
   * A send or edit that has not settled by then failed: a delivery or a reply does not wait on it for good.
   * Longer than the mail connector's own SMTP timeouts, so a slow server is not cut off and mailed twice.
   */
  sendMs: 120_000,
};

/** A plugin as a daemon connector; a reload that makes it again hands the old one over to the new. */
export type PluginConnector = Connector & {
  plugin: PluginInfo;
  /** The plugin's network side as the chat flow sends through it (undefined when create() failed). */
  surface: ChatSurface | undefined;
  /** Once stopped, this connector's runs still under way send their replies through `next`, once it has started. */
  handOver(next: PluginConnector): void;
  /** Settles when its start has (or hermes stopped waiting for it). */
  readonly started: Promise<void>;
};

/** What `hermes status` says of a plugin besides its health. */
export interface PluginInfo {
  module: string;
  version: string;
}

/**
 * One configured plugin as a daemon connector: the plugin's network side behind the shared chat flow.
 * Whatever the plugin throws (in create, start, send, edit, health) turns this connector's health red
 * with the reason; nothing of it reaches the daemon or the other connectors. An error that escapes it
 * (its own timer or handler, a promise it never awaited; see faults.ts) stops it and keeps it red.
 */
export function createPluginConnector(
  core: Core,
  loaded: LoadedPlugin,
  /** A built-in connector written as a plugin brings its own allowlist (email: `allowed_senders`). */
  access?: { allowed(user: string): boolean; home: string },
): PluginConnector {
  const { entry } = loaded;
  const log = core.log.child({ connector: entry.name });
  let fault: string | undefined;
  /** Why it was stopped after an error escaped it: final, unlike a fault that the next success clears. */
  let crashed: string | undefined;
  let phase: "created" | "starting" | "started" | "stopped" = "created";
  const onFault = (what: string, err: unknown) => {
    fault = `${what} failed: ${errorMessage(err)}`;
    log.error({ err, what }, "the plugin failed");
  };
  const onSuccess = () => {
    fault = undefined;
  };
  let instance: PluginInstance | undefined;
  let flow: ChatFlow | undefined;
  let surface: ChatSurface | undefined;
  /** The instance a reload made in this one's place: replies of runs this one took go out through it. */
  let successor: PluginConnector | undefined;
  let markStarted = () => {};
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  // A stopped plugin hands nothing more to hermes (its leftover timers may still call the host).
  const working = () => (crashed || phase === "stopped" ? undefined : flow);
  const notReady = () => crashed ?? (phase === "stopped" ? "it is stopped" : "its create() failed");
  const host = createHost(entry.name, log, new PluginStore(core.store.db), working, notReady);
  // Watched before its first call: whatever create() sets going is the plugin's too.
  const key = watchPlugin(entry.name, loaded, (how: Escape, err: unknown) => {
    const where = { err, plugin: entry.name, module: entry.module };
    if (crashed || phase === "stopped") return log.warn(where, `plugin ${entry.name} (stopped) raised another ${how}; ignored`);
    crashed = `stopped after an ${how} in its own code: ${errorMessage(err)}`;
    log.error(where, `plugin ${entry.name} failed outside any call from hermes (${how}); it is stopped, hermes keeps running`);
    void stop();
  });
  try {
    instance = asPlugin(key, () => loaded.plugin.create(host, loaded.options));
    if (!instance || typeof instance.send !== "function" || typeof instance.start !== "function")
      throw new Error("create() returned no connector with start and send");
    surface = surfaceOf(instance, key, () => (phase === "stopped" && !crashed ? successor : undefined));
    flow = createChatFlow({
      core,
      name: entry.name,
      surface,
      allowed: access?.allowed ?? ((user) => allowedUsers(core, entry.name).includes(user)),
      allowlistHome: access?.home ?? `the connectors.plugins entry '${entry.name}'`,
      log,
      onFault,
      onSuccess,
    });
  } catch (err) {
    onFault("create", err);
  }
  const stop = async () => {
    if (!instance || phase === "stopped") return;
    phase = "stopped";
    retirePlugin(key, log, entry.module);
    const stopped = Promise.resolve().then(() => asPlugin(key, () => instance?.stop()));
    await within(stopped, PLUGIN_WAITS.stopMs, "stop()").catch((err: unknown) => log.warn({ err }, "the plugin failed to stop cleanly"));
  };
  const startIt = async (it: PluginInstance) => {
    phase = "starting";
    try {
      await asPlugin(key, () => it.start());
      if (phase === "starting") phase = "started"; // not when stopped meanwhile
    } catch (err) {
      onFault("start", err);
    }
  };

  return {
    name: entry.name,
    plugin: { module: entry.module, version: loaded.version },
    async start() {
      if (!instance) return markStarted();
      const starting = startIt(instance);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([starting, new Promise<void>((resolve) => (timer = setTimeout(resolve, PLUGIN_WAITS.startMs)))]);
      clearTimeout(timer);
      markStarted();
      if (phase === "starting") log.warn({ waitedMs: PLUGIN_WAITS.startMs }, "the plugin is still starting; going on without waiting");
    },
    stop,
    handOver(next) {
      successor = next;
    },
    surface,
    started,
    health: () => healthOf(instance, phase, crashed ?? fault),
    deliver: (target, text) =>
      working()?.deliver(target, text) ?? Promise.reject(new Error(crashed ?? fault ?? "the plugin did not start")),
    listenerFor: (channel, replyTo) => working()?.listenerFor(channel, replyTo),
  };
}

function createHost(
  name: string,
  log: Core["log"],
  store: PluginStore,
  flow: () => ChatFlow | undefined,
  why: () => string,
): ConnectorHost {
  const notReady = () => Promise.reject(new Error(`${name}: the connector is not ready (${why()})`));
  const logAt = (level: "info" | "warn" | "error" | "debug") => (obj: unknown, msg?: string) => {
    if (typeof obj === "string") log[level](obj);
    else log[level](obj as object, msg ?? "");
  };
  return {
    name,
    log: { info: logAt("info"), warn: logAt("warn"), error: logAt("error"), debug: logAt("debug") },
    // What hermes does with a message is hermes' own work, not the plugin's (see faults.ts).
    receive: (message) => asHermes(() => flow()?.receive(message) ?? notReady()),
    press: (press) => asHermes(() => flow()?.press(press) ?? notReady()),
    state: {
      get: (key) => store.value(name, String(key)),
      set: (key, value) => store.setValue(name, String(key), String(value)),
    },
  };
}

/**
 * The plugin's network side as the chat flow sees it: its limits resolved, its calls made safe to await;
 * once `forward` names another (the instance a reload put in its place), through that one.
 */
function surfaceOf(it: PluginInstance, key: string | undefined, forward: () => PluginConnector | undefined): ChatSurface {
  const text = Number(it.limits?.text);
  const edit = it.edit;
  /** The successor's surface, once it has started (a reload makes it before this one stops). */
  const successor = async () => {
    const next = forward();
    if (!next?.surface) return undefined;
    await next.started;
    return next.surface;
  };
  return {
    send: async (chat, message) => {
      const next = await successor();
      if (next) return next.send(chat, message);
      const sent = await within(
        asPlugin(key, () => it.send(chat, message)),
        PLUGIN_WAITS.sendMs,
        "send()",
      );
      return { id: String(sent?.id ?? "") };
    },
    ...(typeof edit === "function" && {
      edit: async (chat: string, id: string, message: OutboundMessage) => {
        const next = await successor();
        if (next) return next.edit ? next.edit(chat, id, message) : void (await next.send(chat, message));
        return within(
          asPlugin(key, () => edit.call(it, chat, id, message)),
          PLUGIN_WAITS.sendMs,
          "edit()",
        );
      },
    }),
    limits: { text: Number.isFinite(text) && text > 0 ? text : DEFAULT_TEXT_LIMIT, buttons: it.limits?.buttons !== false },
  };
}

/** The entry's allowlist now (a reload may have changed it). */
function allowedUsers(core: Core, name: string): string[] {
  return core.config().connectors.plugins.find((p) => p.name === name)?.allowed_users ?? [];
}

/**
 * Red health of a plugin never pauses the service watchdog (SPEC §17: a plugin never takes the daemon
 * down): a refused send or a throwing start is for the owner to look at, and a plugin still starting or
 * saying its network is down retries on its own; a restart of the whole daemon would help none of them.
 */
function healthOf(it: PluginInstance | undefined, phase: string, fault: string | undefined): ConnectorHealth {
  if (fault) return { ok: false, detail: fault, needsOwner: true };
  if (!it) return { ok: false, detail: "not created", needsOwner: true };
  if (phase === "starting") return { ok: false, detail: "starting", retrying: true };
  if (phase !== "started") return { ok: false, detail: `not started (${phase})`, needsOwner: true };
  try {
    const h: unknown = it.health?.();
    if (h === undefined || h === null) return { ok: true, detail: "started" };
    if (typeof h !== "object" || typeof (h as { ok?: unknown }).ok !== "boolean") {
      const promise = typeof (h as { then?: unknown }).then === "function";
      // An async health() hands over a promise nobody else will await: its rejection must not go unhandled.
      if (promise) Promise.resolve(h).catch(() => {});
      const what = promise ? "a promise (health() must not be async)" : describeValue(h);
      return { ok: false, detail: `health() returned ${what}, not { ok, detail }`, needsOwner: true };
    }
    const { ok, detail } = h as { ok: boolean; detail?: unknown };
    return ok ? { ok: true, detail: String(detail ?? "") } : { ok: false, detail: String(detail ?? ""), retrying: true };
  } catch (err) {
    return { ok: false, detail: `health() failed: ${errorMessage(err)}`, needsOwner: true };
  }
}

/** A value a plugin returned, in a few words for its health line. */
function describeValue(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? String(value);
  return Array.isArray(value) ? "an array" : "an object without a boolean ok";
}

/** `call`, or a rejection naming `what` once `ms` have passed without it settling. */
function within<T>(call: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms / 1000} s`)), ms);
  });
  return Promise.race([call, late]).finally(() => clearTimeout(timer));
}
