import { performance } from "node:perf_hooks";
import type { Logger } from "../log.js";

/**
 * Gives memory back once the daemon has gone quiet. During a burst of work V8 grows its young generation
 * and keeps it: it shrinks it only at a collection that finds the allocation rate low over the last 5 s,
 * or when its memory reducer runs, ~8 s after a full collection and only if nothing allocated meanwhile.
 * A daemon that is idle most of the day would hold ~9 MB it does not use until then. So once the event
 * loop has been idle for `quietLooks` looks and the process has grown by `growthBytes` since the last
 * trim (before the first: at all, so what the start left behind goes too), it asks V8 for the collection
 * that gives memory back (`HeapProfiler.collectGarbage`, which is `isolate.LowMemoryNotification()`:
 * ~25 ms at this size) through an in-process inspector session, once; the next trim waits for new growth
 * and at least `minIntervalMs`, unless what grew is `largeGrowthBytes` or more (the mail libraries loaded
 * at the first mail would otherwise stay resident that long). A run waiting on a slow model looks idle
 * too: it may get one such pause, never a series, since a large growth takes more than a look's work.
 */
export interface IdleTrimOptions {
  log: Logger;
  lookMs?: number;
  quietLooks?: number;
  growthBytes?: number;
  minIntervalMs?: number;
  /** Growth since the last trim that is worth a trim before `minIntervalMs` is over. */
  largeGrowthBytes?: number;
  /** Called after each trim with the resident size before it and the time the collection took. */
  onTrim?: (trim: { rssBefore: number; ms: number }) => void;
}

/**
 * A look counts as quiet when the loop was busy under 1 % of the time since the last one (a poll answered,
 * a timer: ~0.1 %), plus a wake-up's own cost: on a host that pages an idle process's code out (proactive
 * reclaim, as some virtual machines run), coming back from a second's sleep took the loop 14–26 ms here, and
 * a daemon with nothing to do never looked quiet. A run or a burst keeps the loop busy far longer than that.
 */
const QUIET_UTILIZATION = 0.01;
const WAKE_UP_MS = 20;
const MB = 1024 * 1024;

export function startIdleTrim(options: IdleTrimOptions): { stop(): void } {
  const { log, lookMs = 1000, quietLooks = 2, growthBytes = 2 * MB, minIntervalMs = 30_000, largeGrowthBytes = 8 * MB } = options;
  let lastTrim = Number.NEGATIVE_INFINITY;
  let last = performance.eventLoopUtilization();
  let quiet = 0;
  // Before the first trim everything counts as growth: what the start left behind (the parsed config, the
  // chunks' load, a connector's libraries) is given back at the first quiet moment, not only after runs.
  let floor = 0;
  let trimming = false;
  const look = async () => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last);
    quiet = busy.active < (busy.idle + busy.active) * QUIET_UTILIZATION + WAKE_UP_MS ? quiet + 1 : 0;
    last = now;
    const rss = process.memoryUsage.rss();
    floor = Math.min(floor, rss);
    const grown = rss - floor;
    const due = performance.now() - lastTrim >= minIntervalMs || grown >= largeGrowthBytes;
    if (trimming || quiet < quietLooks || grown < growthBytes || !due) return;
    trimming = true;
    const started = performance.now();
    const done = await collectGarbage();
    const ms = performance.now() - started;
    lastTrim = performance.now();
    trimming = false;
    if (!done) return clearInterval(timer);
    // Pages are unmapped in the background: the new floor is what the next look finds.
    floor = Number.POSITIVE_INFINITY;
    last = performance.eventLoopUtilization();
    log.debug({ rssMb: Math.round(rss / 104857.6) / 10, ms: Math.round(ms) }, "idle: memory given back");
    options.onTrim?.({ rssBefore: rss, ms });
  };
  const timer = setInterval(() => void look(), lookMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** False when this Node has no inspector (built without it) or refuses the call: no trims then. */
async function collectGarbage(): Promise<boolean> {
  try {
    const { Session } = await import("node:inspector");
    const session = new Session();
    session.connect();
    try {
      return await new Promise<boolean>((resolve) => session.post("HeapProfiler.collectGarbage", (err) => resolve(!err)));
    } finally {
      session.disconnect();
    }
  } catch {
    return false;
  }
}
