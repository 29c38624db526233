// The harness overhead per agent step: an in-process daemon with an instant model that asks for the clock,
// so each ask is two steps (the call, then the reply) and no model time is in the figure.
import { startDaemon } from "../src/daemon/daemon.js";
import { modelClient } from "../src/model/client.js";
import type { ModelClient, ModelRequest, ModelResult } from "../src/model/types.js";
import { createTempDir, writeConfig } from "../test/helpers/hermes.js";
import { record } from "./figures.js";
import { percentile, round } from "./stats.js";

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

/** Asks of the timed part, each two steps, after the asks that warm up. */
const WARM_ASKS = 100;
const ASKS = 1000;

export interface StepTimes {
  /** Milliseconds per step of the timed asks. */
  perStep: number[];
  /** Usage ledger rows after every ask. */
  ledgerRows: number;
  /** Messages the steps added to the recall index, per step: what each step writes to it, counted, not assumed. */
  indexedPerStep: number;
}

/** Milliseconds per step of 1,000 asks (after 100 to warm up), the usage ledger's rows and the index rows after them. */
export async function stepTimes(): Promise<StepTimes> {
  const dir = createTempDir();
  const config = writeConfig(dir.path, {
    log: { level: "silent" },
    tools: { enabled: ["clock"] },
    connectors: { cli: { enabled: false }, cron: { enabled: false } },
  });
  const daemon = await startDaemon(config, { model: instantModel() });
  const ask = () => daemon.core.submit({ sessionKey: "cli:bench", text: "time?", source: "cli" }).done;
  for (let i = 0; i < WARM_ASKS; i++) await ask();
  const perStep: number[] = [];
  for (let i = 0; i < ASKS; i++) {
    const t = performance.now();
    await ask();
    perStep.push((performance.now() - t) / 2);
  }
  const count = (table: string) => daemon.core.store.db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
  const ledgerRows = count("model_calls");
  const indexedPerStep = count("recall_source WHERE text IS NOT NULL") / (2 * (WARM_ASKS + ASKS));
  await daemon.stop();
  dir.cleanup();
  return { perStep, ledgerRows, indexedPerStep };
}

export async function stepOverhead(): Promise<void> {
  const { perStep, ledgerRows } = await stepTimes();
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
