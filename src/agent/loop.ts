import type { Logger } from "pino";
import { type ModelError, ShutdownAbort } from "../errors.js";
import { RepeatGuard } from "../gate/repeat-guard.js";
import { IMAGE_TOKENS } from "../media/types.js";
import { newCallId } from "../model/call-id.js";
import { estimateTokens, promptTokens } from "../model/tokens.js";
import type { ChatMessage, ModelCall, ModelRequest, ModelResult, PromptWindow, ToolCall } from "../model/types.js";
import type { RunStatus } from "../store/history.js";
import type { Store } from "../store/store.js";
import { type UsageRecord, usageRow } from "../store/usage.js";
import { compactAfterReply } from "./compact-idle.js";
import { promptWithStoredSummary, promptWithSummary } from "./compaction.js";
import type { PromptInput } from "./context.js";
import type { LoopDeps } from "./loop-deps.js";
import type { AgentEvent, RunOutcome, StopReason } from "./types.js";
import { windowHistory } from "./window.js";

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
  /**
   * What goes after the run's own message in each of its requests, not stored (in a group: what only
   * the sender may see): the requests of the session's other senders keep the same start.
   */
  note?: string;
  /**
   * The last prompt sent for this run, in the serving model's tokens, the budget it was built for, and
   * whether it held the session's whole stored history (no turn left out by a jump or a summary).
   */
  lastPrompt?: { tokens: number; budget: number; whole: boolean };
}

/**
 * Drives a run until it ends or waits for approvals. Re-entrant: every fact it needs is in the store,
 * so a run suspended by one process can be resumed by another.
 */
export async function driveRun(run: ActiveRun, deps: LoopDeps): Promise<RunOutcome> {
  const { store } = deps;
  const cfg = deps.config();
  const row = store.history.run(run.runId);
  // Working again: a restart from here on counts an attempt (a step still waiting suspends it again).
  if (row?.status === "suspended") store.history.setRunStatus(run.runId, "running");
  let step = row?.steps ?? 0;
  const images = row?.images ? (JSON.parse(row.images) as string[]) : undefined;
  const guard = RepeatGuard.fromAudit(
    store.audit.ofRun(run.runId),
    { repeatLimit: cfg.agent.repeat_limit, failureLimit: cfg.agent.failure_limit },
    (tool, args) => deps.gate.signatureOf(tool, args),
  );
  const notices: string[] = [];
  const finish = (r: ActiveRun, d: LoopDeps, stopReason: StopReason, reply: string) =>
    finishRun(r, d, stopReason, withNotices(notices, reply));
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
    const ledger: UsageRecord[] = [];
    const called = await callModel(run, deps, { step: step + 1, ledger, notices, images });
    if (called.kind === "over_budget") return finish(run, deps, "max_run_tokens", maxRunTokensReply(cfg.agent.max_run_tokens));
    if (called.kind === "refused") return finish(run, deps, "refused", called.reply);
    const reply = called.result;
    if (!reply.ok) {
      writeLedger(store, ledger);
      if (run.signal.aborted) return finishAborted(run, deps);
      return finish(run, deps, "model_error", modelErrorReply(reply.error));
    }
    step++;
    const calls = withOwnIds(capCalls(reply.toolCalls, notices), store).map(withinDepth);
    const message: ChatMessage = calls.length
      ? { role: "assistant", content: reply.text, toolCalls: calls }
      : { role: "assistant", content: reply.text };
    const stepNo = step;
    store.db.transaction(() => {
      writeLedger(store, ledger);
      store.history.setRunSteps(run.runId, stepNo);
      store.history.appendMessage(run.sessionId, run.runId, message);
    })();
    if (calls.length === 0) return finish(run, deps, "done", reply.text.trim() || "(the model sent an empty reply)");
  }
}

/** What one model call of a run needs besides the run: its step, where its ledger rows go, its notices, the turn's images. */
interface CallContext {
  step: number;
  ledger: UsageRecord[];
  notices: string[];
  images: string[] | undefined;
}

/**
 * How a model call of a run ended: the model answered (or failed: `result.ok`), the next prompt would
 * pass agent.max_run_tokens so no call was made, or an image turn was refused with a reply saying why.
 */
type CallOutcome = { kind: "called"; result: ModelResult } | { kind: "over_budget" } | { kind: "refused"; reply: string };

/**
 * One model call: the prompt is built for the window of the endpoint that will serve it (and rebuilt
 * for another one); every endpoint attempt lands in `ledger`, written with the step. A turn that
 * brought images goes to a model that can see them, or is refused with a reply saying why.
 */
async function callModel(run: ActiveRun, deps: LoopDeps, call: CallContext): Promise<CallOutcome> {
  const cfg = deps.config();
  let model = deps.model();
  const tools = run.allowedTools ? deps.toolSpecs().filter((t) => run.allowedTools?.has(t.name)) : deps.toolSpecs();
  const { step, ledger, notices, images } = call;
  const imageTokens = (images?.length ?? 0) * IMAGE_TOKENS;
  const history = windowHistory(deps.store, run.sessionId, run.runId);
  const noteTokens = run.note ? estimateTokens(run.note) + 1 : 0;
  const input = (window: PromptWindow): PromptInput => ({
    system: run.system,
    tools,
    history,
    budgetTokens: window.contextTokens - window.outputTokens - imageTokens - Math.ceil(noteTokens * deps.calibration.ratio(window.model)),
    ratio: deps.calibration.ratio(window.model),
  });
  // A compaction, when due, happens for the serving endpoint's window; another endpoint's prompt is
  // rebuilt around the summary that is stored by then.
  const build = (window: PromptWindow, planned = promptWithStoredSummary(deps, run.sessionId, input(window))): ModelRequest => {
    const messages = withNote(planned, run.note);
    return { messages, tools, estimatedTokens: promptTokens(messages, tools), rebuild: (other) => build(other) };
  };
  const window = model.window ?? {
    model: model.modelName,
    contextTokens: cfg.model.context_tokens,
    outputTokens: cfg.model.max_output_tokens,
  };
  let request = build(window, await promptWithSummary(run, deps, input(window), !images));
  if (images) {
    // Loaded only for a turn that brought an image: a text-only daemon never pays for it.
    const { prepareImageTurn } = await import("../media/vision.js");
    const turn = await prepareImageTurn(request.messages, images, {
      config: cfg,
      model,
      visionModel: deps.visionModel?.(),
      signal: run.signal,
    });
    if (!turn.ok) return { kind: "refused", reply: turn.reply };
    model = turn.model;
    // A rebuilt prompt would lose the images: this turn is not rebuilt for another window.
    request = { ...request, messages: turn.messages, rebuild: undefined };
  }
  if (overRunBudget(run, deps, request)) return { kind: "over_budget" };
  const budget = window.contextTokens - window.outputTokens - imageTokens;
  const whole = history.length < 400 && request.messages.filter((m) => m.role !== "system").length >= history.length;
  run.lastPrompt = { tokens: (request.estimatedTokens ?? 0) * deps.calibration.ratio(window.model), budget, whole };
  const onCall = (done: ModelCall) => {
    const record = usageRow(done, { runId: run.runId, sessionId: run.sessionId, step });
    ledger.push(record);
    // An image's tokens are not in the estimate: such a turn would skew the model's text calibration.
    if (done.outcome === "ok" && !images) observeTokens(deps, done);
    run.emit({ type: "usage", runId: run.runId, ...usageEvent(step, record) });
  };
  const onNotice = (text: string) => {
    notices.push(text);
    run.emit({ type: "notice", runId: run.runId, text });
  };
  const send = model.prepare(request);
  const result = await deps.limiter.run(
    (release) =>
      send({
        signal: run.signal,
        onText: (delta) => run.emit({ type: "text", runId: run.runId, delta }),
        onAnswered: release,
        onCall,
        onNotice,
      }),
    run.signal,
  );
  return { kind: "called", result };
}

/** `messages` with `note` after the newest user message's text (the run's own message). */
function withNote(messages: ChatMessage[], note: string | undefined): ChatMessage[] {
  if (!note) return messages;
  const at = messages.findLastIndex((m) => m.role === "user");
  const user = messages[at];
  if (user?.role !== "user") return messages;
  return messages.map((m, i) => (i === at ? { ...user, content: `${user.content}\n\n${note}` } : m));
}

/** Calibration is bookkeeping: when saving it fails, the run that got its answer goes on. */
function observeTokens(deps: LoopDeps, done: ModelCall): void {
  try {
    deps.calibration.observe(done.model, done.estimatedPromptTokens ?? 0, done.usage.promptTokens);
  } catch (err) {
    deps.log?.warn({ err, model: done.model }, "the token calibration could not be updated; ignored");
  }
}

/** After the run's reply has gone out: a compaction for the primary model's window, when the budget needs one. */
export function compactAfterRun(run: ActiveRun, deps: LoopDeps, reply = ""): Promise<void> {
  if (farFromBudget(run.lastPrompt, reply)) return Promise.resolve();
  const cfg = deps.config();
  const model = deps.model();
  const window = model.window ?? {
    model: model.modelName,
    contextTokens: cfg.model.context_tokens,
    outputTokens: cfg.model.max_output_tokens,
  };
  return compactAfterReply(run, deps, {
    system: run.system,
    tools: run.allowedTools ? deps.toolSpecs().filter((t) => run.allowedTools?.has(t.name)) : deps.toolSpecs(),
    history: windowHistory(deps.store, run.sessionId, run.runId),
    budgetTokens: window.contextTokens - window.outputTokens,
    ratio: deps.calibration.ratio(window.model),
  });
}

/**
 * True when no compaction can be due after this reply, without reading the history again: the whole history
 * was in the last prompt, the next prompt is at most the last one plus the reply, and the next turn is
 * foreseen as at most one and a half times that much (see compactAfterReply), so two and a half times it
 * fitting the budget means there is room.
 */
function farFromBudget(last: ActiveRun["lastPrompt"], reply: string): boolean {
  // A prompt that left turns out may owe a summary of them whatever its size.
  if (!last?.whole) return false;
  return 2.5 * (last.tokens + estimateTokens(reply)) + 64 < last.budget;
}

/** Runs the idle work after a reply; its failure is logged and never reaches the run. */
export async function workAfterReply(work: (() => Promise<void>) | undefined, log: Logger, session: string): Promise<void> {
  try {
    await work?.();
  } catch (err) {
    log.warn({ err, session }, "the work after a reply failed; ignored");
  }
}

/** True when the run's recorded tokens plus the next prompt's estimate would pass agent.max_run_tokens. */
function overRunBudget(run: ActiveRun, deps: LoopDeps, request: ModelRequest): boolean {
  const limit = deps.config().agent.max_run_tokens;
  if (limit <= 0) return false;
  return deps.store.usage.runTokens(run.runId) + (request.estimatedTokens ?? 0) > limit;
}

/** The event of a ledger row: the call's figures, without the ids the run already carries. */
function usageEvent(step: number, r: UsageRecord) {
  const { runId, sessionId, step: _step, ...call } = r;
  return { step, ...call };
}

function writeLedger(store: Store, ledger: UsageRecord[]): void {
  for (const r of ledger) store.usage.record(r);
  ledger.length = 0;
}

/**
 * The most tool calls one step may make. Small models that loop can send hundreds in one reply; each is an
 * audit row, a result in the prompt and maybe an approval, so the rest of such a reply is dropped.
 */
export const MAX_CALLS_PER_STEP = 20;

function capCalls(calls: ToolCall[], notices: string[]): ToolCall[] {
  if (calls.length <= MAX_CALLS_PER_STEP) return calls;
  notices.push(`the model asked for ${calls.length} tool calls in one step; only the first ${MAX_CALLS_PER_STEP} were run`);
  return calls.slice(0, MAX_CALLS_PER_STEP);
}

/**
 * The calls with ids hermes made. The gate keys a call's audit row, its approval and its result by the
 * id, and an endpoint's ids are whatever it sent: two calls of one step with the same id, or an id an
 * earlier run used, would find another call's decision and run without being asked about.
 */
function withOwnIds(calls: ToolCall[], store: Store): ToolCall[] {
  const taken = new Set<string>();
  const fresh = (): string => {
    const id = newCallId();
    if (taken.has(id) || store.audit.get(id)) return fresh();
    taken.add(id);
    return id;
  };
  return calls.map((call) => ({ ...call, id: fresh() }));
}

/**
 * How deep a call's arguments may nest. No tool's go past a few levels, and the code that stores a step and
 * signs a call recurses: 100,000 levels of brackets (200 KB, which a model gone wrong can send) ran it out
 * of stack and ended the run, where the model should have had an error result to correct.
 */
const MAX_ARGS_DEPTH = 64;

/** The call, or when its arguments nest deeper than MAX_ARGS_DEPTH, the call as malformed (the gate answers it). */
function withinDepth(call: ToolCall): ToolCall {
  if (!nestsDeeper(call.args, MAX_ARGS_DEPTH)) return call;
  return { id: call.id, name: call.name, args: undefined, parseError: `the arguments nest deeper than ${MAX_ARGS_DEPTH} levels` };
}

/** Whether `value` holds objects and arrays more than `max` levels inside each other (walked without recursion). */
function nestsDeeper(value: unknown, max: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = stack.pop(); next; next = stack.pop()) {
    if (next.value === null || typeof next.value !== "object") continue;
    if (next.depth >= max) return true;
    for (const child of Object.values(next.value)) stack.push({ value: child, depth: next.depth + 1 });
  }
  return false;
}

function withNotices(notices: string[], reply: string): string {
  return notices.length ? `(${notices.join("; ")})\n\n${reply}` : reply;
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
  max_run_tokens: "done",
  repeat: "done",
  // The run ended as it should, with a reply saying what to set up; nothing failed that a retry would fix.
  refused: "done",
  aborted: "aborted",
  model_error: "error",
  suspended: "suspended",
  interrupted: "interrupted",
};

function finishRun(run: ActiveRun, deps: LoopDeps, stopReason: StopReason, reply: string): RunOutcome {
  deps.store.history.endRun(run.runId, STATUS_OF[stopReason], stopReason, reply);
  return { runId: run.runId, reply, stopReason };
}

function finishAborted(run: ActiveRun, deps: LoopDeps): RunOutcome {
  if (run.signal.reason instanceof ShutdownAbort) {
    return finishRun(run, deps, "interrupted", "hermes was stopping and interrupted this run before it finished; ask again.");
  }
  return finishRun(run, deps, "aborted", "Stopped.");
}

function maxRunTokensReply(limit: number): string {
  return `I stopped this run before its next model call: it would pass ${limit} tokens (agent.max_run_tokens = ${limit}). Ask me to continue, or raise agent.max_run_tokens in hermes.yaml.`;
}

function maxStepsReply(maxSteps: number): string {
  return `I stopped after ${maxSteps} model steps without finishing (agent.max_steps = ${maxSteps}). Ask me to continue, or raise agent.max_steps in hermes.yaml.`;
}

function repeatReply(detail: string): string {
  return `I stopped this run: ${detail}. Try asking differently.`;
}

/** What the user reads when the model cannot answer: what is wrong and how to fix it. */
export function modelErrorReply(error: ModelError): string {
  if (error.fix) return `The model is unreachable: ${error.message}. ${error.fix}, then ask again.`;
  switch (error.kind) {
    case "unreachable":
      return `The model is unreachable: ${error.message}. Start it (for Ollama: \`systemctl start ollama\` or \`ollama serve\`) or fix model.base_url in hermes.yaml, then ask again.`;
    case "model_missing":
      return `The model is not available: ${error.message}.`;
    case "timeout":
      return `The model did not answer in time: ${error.message}. A first request may load the model; try again, or raise model.timeout_s.`;
    case "budget":
      return `No model is left for today: ${error.message}. Raise model.daily_tokens (or a fallback's) in hermes.yaml, or wait until tomorrow.`;
    default:
      return `The model request failed: ${error.message}.`;
  }
}
