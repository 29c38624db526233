import type { Config } from "../config/schema.js";
import type { ModelError } from "../errors.js";
import type { Gate } from "../gate/gate.js";
import { IMAGE_TOKENS } from "../media/types.js";
import type { ChatMessage, ModelClient, ToolCall, ToolSpec } from "../model/types.js";
import type { RunStatus } from "../store/history.js";
import type { Store } from "../store/store.js";
import { buildPrompt, promptTokens, type TokenCalibration } from "./context.js";
import type { Limiter } from "./limiter.js";
import { RepeatGuard } from "./repeat-guard.js";
import type { AgentEvent, RunOutcome, StopReason } from "./types.js";

export interface LoopDeps {
  store: Store;
  gate: Gate;
  limiter: Limiter;
  config: () => Config;
  model: () => ModelClient;
  /** The second model used only for turns that carry an image (`model.vision_model`), when configured. */
  visionModel?: () => ModelClient | undefined;
  toolSpecs: () => ToolSpec[];
  calibration: TokenCalibration;
}

/** A run being driven by this process. */
export interface ActiveRun {
  runId: string;
  sessionId: number;
  sessionKey: string;
  channel: string;
  /** When set, the only tools this run may see and use. */
  allowedTools?: Set<string>;
  signal: AbortSignal;
  emit: (event: AgentEvent) => void;
  /** The system prompt for this run (base prompt and memory block), fixed for the run's duration. */
  system: string;
}

/**
 * Drives a run until it ends or waits for approvals. Re-entrant: every fact it needs is in the store,
 * so a run suspended by one process can be resumed by another.
 */
export async function driveRun(run: ActiveRun, deps: LoopDeps): Promise<RunOutcome> {
  const { store } = deps;
  const cfg = deps.config();
  const row = store.history.run(run.runId);
  let step = row?.steps ?? 0;
  const images = row?.images ? (JSON.parse(row.images) as string[]) : undefined;
  const guard = RepeatGuard.fromAudit(store.audit.ofRun(run.runId), {
    repeatLimit: cfg.agent.repeat_limit,
    failureLimit: cfg.agent.failure_limit,
  });
  for (;;) {
    if (run.signal.aborted) return finishAborted(run, deps);
    const open = openStep(store.history.runMessages(run.runId));
    if (open) {
      const ctx = { ...run, step, guard };
      const result = await deps.gate.runStep(ctx, open.calls, open.answered);
      if (result.stop) return finish(run, deps, "repeat", repeatReply(result.stop));
      if (result.pending > 0) {
        store.history.setRunStatus(run.runId, "suspended");
        return { runId: run.runId, reply: "", stopReason: "suspended" };
      }
      continue;
    }
    if (step >= cfg.agent.max_steps) return finish(run, deps, "max_steps", maxStepsReply(cfg.agent.max_steps));
    const reply = await callModel(run, deps, images);
    if ("refused" in reply) return finish(run, deps, "done", reply.refused);
    if (!reply.ok) {
      if (run.signal.aborted) return finishAborted(run, deps);
      return finish(run, deps, "model_error", modelErrorReply(reply.error));
    }
    step++;
    const message: ChatMessage = reply.toolCalls.length
      ? { role: "assistant", content: reply.text, toolCalls: reply.toolCalls }
      : { role: "assistant", content: reply.text };
    const stepNo = step;
    store.db.transaction(() => {
      store.history.setRunSteps(run.runId, stepNo);
      store.history.appendMessage(run.sessionId, run.runId, message);
    })();
    if (reply.toolCalls.length === 0) return finish(run, deps, "done", reply.text.trim() || "(the model sent an empty reply)");
  }
}

async function callModel(run: ActiveRun, deps: LoopDeps, images: string[] | undefined) {
  const cfg = deps.config();
  let model = deps.model();
  const tools = run.allowedTools ? deps.toolSpecs().filter((t) => run.allowedTools?.has(t.name)) : deps.toolSpecs();
  let prompt = buildPrompt({
    system: run.system,
    tools,
    history: deps.store.history.recentMessages(run.sessionId, 400),
    budgetTokens: cfg.model.context_tokens - cfg.model.max_output_tokens - (images?.length ?? 0) * IMAGE_TOKENS,
    ratio: deps.calibration.ratio(model.modelName),
  });
  if (images) {
    // Loaded only for a turn that brought an image: a text-only daemon never pays for it.
    const { prepareImageTurn } = await import("../media/vision.js");
    const turn = await prepareImageTurn(prompt, images, { config: cfg, model, visionModel: deps.visionModel?.(), signal: run.signal });
    if (!turn.ok) return { refused: turn.reply };
    ({ model, messages: prompt } = turn);
  }
  const send = model.prepare({ messages: prompt, tools });
  const result = await deps.limiter.run((release) =>
    send({ signal: run.signal, onText: (delta) => run.emit({ type: "text", runId: run.runId, delta }), onAnswered: release }),
  );
  // An image's tokens are not in the estimate: such a turn would skew the model's text calibration.
  if (result.ok && !images) deps.calibration.observe(model.modelName, promptTokens(prompt, tools), result.usage.promptTokens);
  return result;
}

/** The calls of the run's latest step that have no result yet, if any. */
export function openStep(messages: ChatMessage[]): { calls: ToolCall[]; answered: Set<string> } | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as ChatMessage;
    if (m.role !== "assistant") continue;
    if (!m.toolCalls?.length) return undefined;
    const answered = new Set(messages.slice(i + 1).flatMap((r) => (r.role === "tool" ? [r.toolCallId] : [])));
    return m.toolCalls.every((c) => answered.has(c.id)) ? undefined : { calls: m.toolCalls, answered };
  }
  return undefined;
}

const STATUS_OF: Record<StopReason, RunStatus> = {
  done: "done",
  max_steps: "done",
  repeat: "done",
  aborted: "aborted",
  model_error: "error",
  suspended: "suspended",
  interrupted: "interrupted",
};

function finish(run: ActiveRun, deps: LoopDeps, stopReason: StopReason, reply: string): RunOutcome {
  deps.store.history.endRun(run.runId, STATUS_OF[stopReason], stopReason, reply);
  return { runId: run.runId, reply, stopReason };
}

function finishAborted(run: ActiveRun, deps: LoopDeps): RunOutcome {
  if ((run.signal.reason as Error | undefined)?.name === "ShutdownAbort") {
    return finish(run, deps, "interrupted", "hermes was stopping and interrupted this run before it finished; ask again.");
  }
  return finish(run, deps, "aborted", "Stopped.");
}

function maxStepsReply(maxSteps: number): string {
  return `I stopped after ${maxSteps} model steps without finishing (agent.max_steps = ${maxSteps}). Ask me to continue, or raise agent.max_steps in hermes.yaml.`;
}

function repeatReply(detail: string): string {
  return `I stopped this run: ${detail}. The call was not executed again. Try asking differently.`;
}

/** What the user reads when the model cannot answer: what is wrong and how to fix it. */
export function modelErrorReply(error: ModelError): string {
  switch (error.kind) {
    case "unreachable":
      return `The model is unreachable: ${error.message}. Start it (for Ollama: \`systemctl start ollama\` or \`ollama serve\`) or fix model.base_url in hermes.yaml, then ask again.`;
    case "model_missing":
      return `The model is not available: ${error.message}.`;
    case "timeout":
      return `The model did not answer in time: ${error.message}. A first request may load the model; try again, or raise model.timeout_s.`;
    default:
      return `The model request failed: ${error.message}.`;
  }
}
