import type { ModelCall } from "../model/types.js";
import { maskUrl } from "../url-secrets.js";
import type { Db } from "./db.js";
import { statements } from "./statements.js";

/** One model call, as recorded. Tokens are what the endpoint reported, or an estimate when `estimated`. */
export interface UsageRecord {
  runId: string | null;
  sessionId: number | null;
  step: number | null;
  endpoint: string;
  model: string;
  promptTokens: number;
  outputTokens: number;
  cachedTokens: number | null;
  estimated: boolean;
  firstByteMs: number | null;
  totalMs: number;
  outcome: string;
}

/** The ledger row of one endpoint attempt: tokens as the endpoint reported them, else estimated and marked so. */
export function usageRow(call: ModelCall, at: { runId: string | null; sessionId: number | null; step: number | null }): UsageRecord {
  const ok = call.outcome === "ok";
  const promptReported = call.usage.promptTokens !== undefined;
  const outputReported = call.usage.outputTokens !== undefined;
  return {
    ...at,
    endpoint: call.endpoint,
    model: call.model,
    promptTokens: ok ? (call.usage.promptTokens ?? call.estimatedPromptTokens ?? 0) : 0,
    outputTokens: ok ? (call.usage.outputTokens ?? Math.ceil(call.outputChars / 3.6)) : 0,
    cachedTokens: call.usage.cachedTokens ?? null,
    estimated: ok && (!promptReported || !outputReported),
    firstByteMs: call.usage.firstByteMs ?? null,
    totalMs: call.totalMs,
    outcome: call.outcome,
  };
}

export type UsageGrouping = "day" | "session" | "model" | "endpoint";

export interface UsageTotals {
  key: string;
  calls: number;
  failed: number;
  prompt_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  /** Calls whose tokens are estimates (the endpoint reported none). */
  estimated: number;
  /** Output tokens per second of generation (after the first byte), over the calls that reported timings. */
  tokens_per_s: number | null;
}

const KEYS: Record<UsageGrouping, string> = {
  day: "strftime('%Y-%m-%d', u.at / 1000, 'unixepoch', 'localtime')",
  session: "COALESCE(s.key, '(none)')",
  model: "u.model",
  endpoint: "u.endpoint",
};

const TOTALS = `COUNT(*) AS calls, SUM(u.outcome <> 'ok') AS failed, SUM(u.prompt_tokens) AS prompt_tokens,
  SUM(u.output_tokens) AS output_tokens, COALESCE(SUM(u.cached_tokens), 0) AS cached_tokens, SUM(u.estimated) AS estimated,
  SUM(CASE WHEN u.outcome = 'ok' AND u.first_byte_ms IS NOT NULL THEN u.output_tokens END) AS timed_tokens,
  SUM(CASE WHEN u.outcome = 'ok' AND u.first_byte_ms IS NOT NULL THEN u.total_ms - u.first_byte_ms END) AS gen_ms`;

/** The usage ledger: one row per model call, each endpoint attempt included. */
export class UsageStore {
  private readonly q;
  private readonly grouped = new Map<UsageGrouping, ReturnType<Db["prepare"]>>();

  constructor(private readonly db: Db) {
    this.q = statements(db, {
      insert: () =>
        db.prepare(
          `INSERT INTO model_calls (at, run_id, session_id, step, endpoint, model, prompt_tokens, output_tokens, cached_tokens,
          estimated, first_byte_ms, total_ms, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ),
      runTokens: () => db.prepare("SELECT COALESCE(SUM(prompt_tokens + output_tokens), 0) FROM model_calls WHERE run_id = ?").pluck(),
      endpointSince: () =>
        db
          .prepare("SELECT COALESCE(SUM(prompt_tokens + output_tokens), 0) FROM model_calls WHERE endpoint = ? AND model = ? AND at >= ?")
          .pluck(),
      since: () => db.prepare(`SELECT 'all' AS key, ${TOTALS} FROM model_calls u WHERE u.at >= ?`),
      ofRun: () => db.prepare("SELECT * FROM model_calls WHERE run_id = ? ORDER BY id"),
    });
  }

  record(r: UsageRecord): void {
    this.q.insert.run(
      Date.now(),
      r.runId,
      r.sessionId,
      r.step,
      // An endpoint's URL is stored with any secret inside it masked: usage rows are shown on the dashboard.
      maskUrl(r.endpoint),
      r.model,
      r.promptTokens,
      r.outputTokens,
      r.cachedTokens,
      r.estimated ? 1 : 0,
      r.firstByteMs,
      r.totalMs,
      r.outcome,
    );
  }

  /** Prompt + output tokens of a run's model calls so far. */
  runTokens(runId: string): number {
    return this.q.runTokens.get(runId) as number;
  }

  /** Prompt + output tokens an endpoint used since a moment (ms since the epoch). */
  endpointTokensSince(endpoint: string, model: string, since: number): number {
    return this.q.endpointSince.get(maskUrl(endpoint), model, since) as number;
  }

  /** Totals since a moment, over everything or grouped; groups in key order. */
  totals(since: number, by?: UsageGrouping): UsageTotals[] {
    if (!by) return (this.q.since.all(since) as RawTotals[]).filter((r) => r.calls > 0).map(finishTotals);
    let stmt = this.grouped.get(by);
    if (!stmt) {
      stmt = this.db.prepare(
        `SELECT ${KEYS[by]} AS key, ${TOTALS} FROM model_calls u LEFT JOIN sessions s ON s.id = u.session_id
         WHERE u.at >= ? GROUP BY 1 ORDER BY 1`,
      );
      this.grouped.set(by, stmt);
    }
    return (stmt.all(since) as RawTotals[]).map(finishTotals);
  }

  ofRun(runId: string): Record<string, unknown>[] {
    return this.q.ofRun.all(runId) as Record<string, unknown>[];
  }
}

type RawTotals = Omit<UsageTotals, "tokens_per_s"> & { timed_tokens: number | null; gen_ms: number | null };

function finishTotals({ timed_tokens, gen_ms, ...t }: RawTotals): UsageTotals {
  const perS = timed_tokens && gen_ms && gen_ms > 0 ? Math.round((timed_tokens / gen_ms) * 10000) / 10 : null;
  return { ...t, tokens_per_s: perS };
}

/** Midnight of today, local time, in ms since the epoch. */
export function startOfToday(now = new Date()): number {
  return new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
}
