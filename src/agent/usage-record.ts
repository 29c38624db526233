import type { ModelCall } from "../model/types.js";
import type { UsageRecord } from "../store/usage.js";

/** A ledger row for one model call of a run's step, or of a session's compaction (no run, no step). */
export function usageRecord(run: Pick<UsageRecord, "runId" | "sessionId">, step: number | null, call: ModelCall): UsageRecord {
  const ok = call.outcome === "ok";
  const promptReported = call.usage.promptTokens !== undefined;
  const outputReported = call.usage.outputTokens !== undefined;
  return {
    runId: run.runId,
    sessionId: run.sessionId,
    step,
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
