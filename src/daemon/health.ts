import type { Logger } from "pino";
import type { Connector } from "../connector.js";
import type { ModelClient, ModelResult, ProbeResult } from "../model/types.js";
import type { Notifier } from "./systemd.js";

/**
 * Tracks whether the model endpoint is ready. While it is not (Ollama may still be starting), it keeps
 * probing with capped backoff and logs the moment that changes.
 */
/**
 * Probes the model endpoint until it is ready, and again when a chat call finds it unreachable.
 * `onRecovered` runs when an endpoint seen down is ready again: what could not be read from it at
 * start (its real context window) is read then.
 */
export function createModelMonitor(model: () => ModelClient, log: Logger, onRecovered: () => void = () => {}) {
  let last: { at: number; result: ProbeResult } | undefined;
  let inflight: Promise<ProbeResult> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let delay = 1000;
  const ready = (p: ProbeResult) => p.reachable && p.modelPresent !== false;

  const probe = (): Promise<ProbeResult> => {
    inflight ??= model()
      .probe(AbortSignal.timeout(3000))
      .then((result) => {
        const was = last && ready(last.result);
        last = { at: Date.now(), result };
        if (ready(result) && was !== true) log.info({ detail: result.detail }, "model endpoint ready");
        if (ready(result) && was === false) onRecovered();
        if (!ready(result) && was !== false)
          log.warn({ detail: result.detail }, "model endpoint not ready; replies will say so until it is");
        return result;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };

  let stopped = false;
  // One timer at most: a start (every reload starts the monitor again) or a chat call that found the model
  // unreachable while a timer waited added a second round of probes, which stop() never ended.
  const watch = () => {
    clearTimeout(timer);
    timer = undefined;
    void probe().then((result) => {
      if (stopped) return;
      if (ready(result)) {
        delay = 1000;
        return;
      }
      clearTimeout(timer);
      timer = setTimeout(watch, delay);
      timer.unref();
      delay = Math.min(delay * 2, 60_000);
    });
  };

  /** What a chat call showed: an answer means ready; an unreachable endpoint is watched again from now. */
  const observe = (result: ModelResult) => {
    if (result.ok && last && !ready(last.result)) {
      last = { at: Date.now(), result: { reachable: true, detail: "answered a chat request" } };
      log.info("model endpoint ready");
      onRecovered();
    }
    if (!result.ok && result.error.kind === "unreachable" && !timer && !inflight) {
      delay = 1000;
      watch();
    }
  };

  return {
    /** Starts probing (again, after a reload: from the shortest wait); keeps retrying with backoff until the model is ready. */
    start: () => {
      stopped = false;
      delay = 1000;
      watch();
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
    },
    /** The latest probe, refreshed when older than five seconds. */
    get: async (): Promise<ProbeResult> => (last && Date.now() - last.at < 5000 ? last.result : probe()),
    current: (): ProbeResult | undefined => last?.result,
    isReady: () => (last ? ready(last.result) : false),
    /** True when the latest probe, taken within the current probe interval, found the endpoint not ready. */
    seenDown: () => !!last && !ready(last.result) && Date.now() - last.at <= delay + 1000,
    observe,
  };
}

export type ModelMonitor = ReturnType<typeof createModelMonitor>;

/**
 * Pings the systemd watchdog only while the event loop keeps time and every connector is healthy or
 * retrying, so a deaf (stuck) poller or a wedged loop gets the daemon restarted, and an internet outage does
 * not. Keeps STATUS= current.
 */
export function startHealthLoop(o: { connectors: () => Connector[]; notifier: Notifier; model: ModelMonitor; log: Logger }) {
  const intervalMs = o.notifier.watchdogIntervalMs() ?? 5000;
  let expected = Date.now() + intervalMs;
  let lastStatus = "";
  let wasHealthy = true;
  const tick = () => {
    const lagMs = Date.now() - expected;
    expected = Date.now() + intervalMs;
    const sick = o.connectors().filter((c) => {
      const h = c.health();
      return !h.ok && !h.needsOwner && !h.retrying;
    });
    const loopOk = lagMs < Math.max(2000, intervalMs);
    const healthy = sick.length === 0 && loopOk;
    if (healthy) void o.notifier.watchdog();
    if (healthy !== wasHealthy) {
      const detail = sick.map((c) => `${c.name}: ${c.health().detail}`);
      if (!healthy) o.log.error({ unhealthy: detail, lagMs }, "unhealthy: watchdog pings paused");
      else o.log.info("healthy again: watchdog pings resumed");
      wasHealthy = healthy;
    }
    const status = statusLine(o.connectors(), o.model);
    if (status !== lastStatus) {
      lastStatus = status;
      void o.notifier.status(status);
    }
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();
  return { stop: () => clearInterval(timer) };
}

export function statusLine(connectors: Connector[], model: ModelMonitor): string {
  const parts = connectors.map((c) => {
    const h = c.health();
    return `${c.name} ${h.ok ? "ok" : h.retrying ? "offline" : "down"}`;
  });
  const probe = model.current();
  const modelState = !probe ? "model checking" : model.isReady() ? "model ok" : "model down";
  return ["serving", ...parts, modelState].join("; ");
}
