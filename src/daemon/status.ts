/** What `hermes status` reports: the connectors, the model, today's usage, runs, memory, speech and vision. */
import type { Runner } from "../agent/runner.js";
import type { Config } from "../config/schema.js";
import type { Connector, DaemonStatus } from "../connector.js";
import type { ProbeResult } from "../model/types.js";
import type { Store } from "../store/store.js";
import { startOfToday } from "../store/usage.js";
import { maskUrl, maskUrlsInText } from "../url-secrets.js";
import { VERSION } from "../version.js";
import type { State } from "./parts.js";

export function statusOf(
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
    connectors: connectors.map((c) => {
      const health = c.health();
      return { name: c.name, ...health, detail: maskUrlsInText(health.detail), ...c.plugin };
    }),
    model: {
      provider: state.model.provider,
      base_url: maskUrl(state.model.baseUrl),
      name: state.model.modelName,
      reachable: probe.reachable,
      // A down endpoint's fix (a refused key, a base_url without /v1) is what the owner needs to read here.
      detail: maskUrlsInText(!probe.reachable && probe.fix ? `${probe.detail}; ${probe.fix}` : probe.detail),
    },
    serving: ((s) => ({ ...s, endpoint: maskUrl(s.endpoint) }))(state.model.serving()),
    usage_today: usageToday(state.loaded.config, store),
    runs: { running: runs.running, queued: runs.queued, suspended: runs.suspended },
    pending_approvals: runs.pendingApprovals,
    memory: memoryOf(process.memoryUsage()),
    ...(state.mcp ? { mcp: state.mcp.reports() } : {}),
  };
}

function usageToday(config: Config, store: Store) {
  const today = startOfToday();
  const [t] = store.usage.totals(today);
  const limits = [config.model, ...config.model.fallbacks].filter((e) => e.daily_tokens > 0);
  return {
    calls: t?.calls ?? 0,
    prompt_tokens: t?.prompt_tokens ?? 0,
    output_tokens: t?.output_tokens ?? 0,
    estimated_calls: t?.estimated ?? 0,
    // As the clients name an endpoint (and the ledger records it): without a trailing slash.
    daily_limits: limits
      .map((e) => ({ ...e, base_url: e.base_url.replace(/\/+$/, "") }))
      .map((e) => ({
        endpoint: maskUrl(e.base_url),
        daily_tokens: e.daily_tokens,
        model: e.name,
        used: store.usage.endpointTokensSince(e.base_url, e.name, today),
      })),
  };
}

/** How long one look at the speech endpoint and vision serves `status` calls (so a busy dashboard does not probe each time). */
export const MEDIA_STATUS_MS = 15_000;

/** The same answer for `ms` after it was asked for. */
export function reusedFor<T>(ms: number, ask: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (!last || Date.now() - last.at > ms) last = { at: Date.now(), value: ask() };
    return last.value;
  };
}

/** Speech and vision, for `hermes status`: loaded only when asked. */
export async function mediaStatus(state: State): Promise<Pick<DaemonStatus, "speech" | "vision">> {
  const { checkSpeech, checkVision } = await import("../media/checks.js");
  const config = state.loaded.config;
  const [speech, vision] = await Promise.all([
    checkSpeech(config, AbortSignal.timeout(3000)),
    checkVision(config, state.model, state.visionModel, AbortSignal.timeout(3000)),
  ]);
  return {
    speech: { ok: speech.ok, detail: maskUrlsInText(speech.detail) },
    vision: { ok: vision.ok === true, detail: maskUrlsInText(vision.detail) },
  };
}

/** What `hermes status --json` says of memory: the process, V8's heap (used and reserved), and buffers outside it. */
function memoryOf(m: NodeJS.MemoryUsage) {
  return { rss_mb: mb(m.rss), heap_used_mb: mb(m.heapUsed), heap_total_mb: mb(m.heapTotal), external_mb: mb(m.external) };
}

function mb(bytes: number): number {
  return Math.round((bytes / 1048576) * 10) / 10;
}
