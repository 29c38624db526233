/**
 * The gate and the agent loop inside the test process, from small factories: a scripted model (a
 * function of the request), a fresh SQLite file in a temp dir, the real approvals, gate, runner and
 * tools. A rule of the gate or the loop is tested in milliseconds, not through a spawned daemon.
 */
import { join } from "node:path";
import { onTestFinished } from "vitest";
import { stringify } from "yaml";
import { z } from "zod";
import { TokenCalibration } from "../../src/agent/context.js";
import { Limiter } from "../../src/agent/limiter.js";
import { Runner } from "../../src/agent/runner.js";
import type { AgentEvent, RunOutcome } from "../../src/agent/types.js";
import { parseConfig } from "../../src/config/load.js";
import type { Config } from "../../src/config/schema.js";
import { Approvals } from "../../src/gate/approvals.js";
import { Gate } from "../../src/gate/gate.js";
import { RepeatGuard } from "../../src/gate/repeat-guard.js";
import type { StepContext } from "../../src/gate/types.js";
import { createLogger } from "../../src/log.js";
import { modelClient } from "../../src/model/client.js";
import { parseToolCallText } from "../../src/model/tool-call-text.js";
import type { ChatMessage, ModelRequest, ModelResult, ToolCall } from "../../src/model/types.js";
import type { AuditRow } from "../../src/store/audit.js";
import { openStore, type Store } from "../../src/store/store.js";
import { defineTool, toolSpec } from "../../src/tools/define.js";
import { loadTools } from "../../src/tools/registry.js";
import type { AnyTool } from "../../src/tools/types.js";
import { useTempDir } from "./fixture.js";

/** One scripted model answer: text (a `<tool_call>` block in it is parsed as the Hermes format is), and native calls. */
export interface Turn {
  text?: string;
  /** `id`: the id the endpoint sends (default: one per call), e.g. the same for two calls as a broken server does. */
  toolCalls?: { id?: string; name: string; arguments?: unknown }[];
}

export type Responder = (request: ModelRequest, index: number) => Turn;

/** A model in the test process: scripted turns first, then the responder; every request is kept. */
export function scriptedModel() {
  const queue: Turn[] = [];
  const requests: ModelRequest[] = [];
  let responder: Responder = () => ({ text: "ok" });
  const answer = (request: ModelRequest): ModelResult => {
    const index = requests.push(request) - 1;
    const turn = queue.shift() ?? responder(request, index);
    const parsed = parseToolCallText(turn.text ?? "");
    const native = (turn.toolCalls ?? []).map(
      (c, i): ToolCall => ({ id: c.id ?? `c${index}_${i}`, name: c.name, args: c.arguments ?? {} }),
    );
    return { ok: true, text: parsed.text, toolCalls: [...native, ...parsed.calls], usage: {}, finishReason: "stop" };
  };
  const client = modelClient({
    provider: "ollama",
    baseUrl: "scripted",
    modelName: "scripted",
    probe: async () => ({ reachable: true, modelPresent: true, detail: "scripted" }),
    prepare: (request) => async () => answer(request),
  });
  return {
    client,
    requests,
    /** Answers the next model calls with these turns, in order. */
    script: (...turns: Turn[]) => void queue.push(...turns),
    /** Answers every call the script does not cover. */
    respond: (next: Responder) => {
      responder = next;
    },
    /** The content of the tool results the `index`th request carried. */
    toolResults: (index: number) => toolContents(requests[index]?.messages ?? []),
  };
}

export type ScriptedModel = ReturnType<typeof scriptedModel>;

function toolContents(messages: ChatMessage[]): string[] {
  return messages.flatMap((m) => (m.role === "tool" ? [m.content] : []));
}

/** The real config, with its defaults, from settings as they would stand in hermes.yaml. */
export function makeConfig(settings: Record<string, unknown> = {}): Config {
  const base = {
    timezone: "Europe/Berlin",
    model: { provider: "ollama", base_url: "http://127.0.0.1:9", name: "scripted" },
    log: { level: "silent" },
  };
  return parseConfig(stringify({ ...base, ...settings }), "hermes.yaml").config;
}

/** A fresh store in this test's temp dir, closed when the test finishes. */
export function makeStore(dir = useTempDir()): Store {
  const store = openStore(join(dir, "hermes.db"));
  onTestFinished(() => store.close());
  return store;
}

/** A tool for gate tests: records its runs, answers with `answer` or throws it as an error. */
export function recordingTool(name: string, o: { readOnly?: boolean; needsConfirmation?: boolean; fails?: boolean } = {}) {
  const runs: unknown[] = [];
  const tool = defineTool({
    name,
    description: `test tool ${name}`,
    input: z.strictObject({ word: z.string().optional() }),
    readOnly: o.readOnly ?? false,
    needsConfirmation: o.needsConfirmation ?? false,
    run: async (args) => {
      runs.push(args);
      if (o.fails) throw new Error(`${name} broke`);
      return `${name} ran ${args.word ?? ""}`.trim();
    },
  });
  return { tool, runs };
}

export interface AgentOptions {
  /** Built-in tools to enable (their real code), as `tools.enabled`. */
  tools?: string[];
  /** Tools added to those (instrumented ones). */
  extraTools?: AnyTool[];
  /** `agent:` settings (repeat_limit, max_steps, confirm, confirm_timeout_s …). */
  agent?: Record<string, unknown>;
  /** The directory of an earlier agent: this one opens its store, as the next start of a daemon would. */
  dir?: string;
}

/** The parts the gate works with: store, config, approvals and a tool map. */
async function makeParts(o: AgentOptions) {
  const dir = o.dir ?? useTempDir();
  const store = makeStore(dir);
  const config = makeConfig({
    agent: { confirm: [], ...o.agent },
    tools: { enabled: o.tools ?? [], files: { root: join(dir, "files") } },
  });
  const loaded = await loadTools(config.tools.enabled, { config, store, now: () => new Date() }, o.extraTools ?? []);
  const approvals = new Approvals({ store, config: () => config });
  onTestFinished(() => approvals.disarmAll());
  const gate = new Gate({ store, approvals, tools: () => loaded.tools, config: () => config });
  return { dir, store, config, approvals, gate, tools: loaded.tools };
}

/** The gate alone, with a run to work for: `step(calls)` runs one step's calls as the loop would. */
export async function makeGate(o: AgentOptions = {}) {
  const parts = await makeParts(o);
  const { store, config } = parts;
  const session = store.history.activeSession("cli:test");
  const runId = "run_gate";
  store.history.createRun(runId, session.id, "cli", { input: "test", channel: "cli:test" });
  store.history.startRun(runId);
  const events: AgentEvent[] = [];
  const guard = new RepeatGuard({ repeatLimit: config.agent.repeat_limit, failureLimit: config.agent.failure_limit });
  let step = 0;
  const ctx = (): StepContext => ({
    runId,
    sessionId: session.id,
    sessionKey: "cli:test",
    channel: "cli:test",
    step,
    signal: new AbortController().signal,
    guard,
    emit: (e) => events.push(e),
  });
  return {
    ...parts,
    runId,
    events,
    /** Runs the calls as one step (again, for the calls still open, after a decision); resolves the step's result. */
    async step(calls: ToolCall[], answered = new Set<string>()) {
      step++;
      return parts.gate.runStep(ctx(), calls, answered);
    },
    /** The tool results the gate wrote for this run, by call id. */
    results: () => new Map(store.history.runMessages(runId).flatMap((m) => (m.role === "tool" ? [[m.toolCallId, m.content]] : []))),
    audit: () => auditRows(store),
  };
}

/** The real runner (queue, loop, gate, approvals) over a scripted model. `ask` resolves the outcome and the run's events. */
export async function makeAgent(o: AgentOptions = {}) {
  const parts = await makeParts(o);
  const { store, config, gate, approvals, tools } = parts;
  const model = scriptedModel();
  const unattended: AgentEvent[] = [];
  const runner = new Runner({
    store,
    gate,
    approvals,
    limiter: new Limiter(config.model.concurrency),
    config: () => config,
    log: createLogger("silent"),
    model: () => model.client,
    toolSpecs: () => [...tools.values()].map(toolSpec),
    calibration: new TokenCalibration(),
    timeNote: () => "Current time: now",
    prompt: () => ({ system: "You are a test." }),
    fallbackListener: () => (e) => unattended.push(e),
  });
  runner.recover();
  runner.connectorsReady();
  onTestFinished(() => runner.shutdown(0));
  return {
    ...parts,
    model,
    runner,
    /** Events of runs nobody was attached to (decisions after the asker left). */
    unattended,
    /** Submits a message; `done` resolves once the run ends (not while it waits for approval). */
    submit(text: string, session = "cli:test") {
      const events: AgentEvent[] = [];
      const { runId, done } = runner.submit({ sessionKey: session, text, source: "cli", listener: (e) => events.push(e) });
      return { runId, events, done };
    },
    /** Submits a message and resolves the run's outcome and events. */
    async ask(text: string, session = "cli:test"): Promise<RunOutcome & { events: AgentEvent[] }> {
      const { events, done } = this.submit(text, session);
      return { ...(await done), events };
    },
    audit: () => auditRows(store),
  };
}

/** The columns of an audit row that `hermes audit` shows for a call and its decision. */
export type AuditLine = Pick<AuditRow, "tool" | "args" | "decision" | "reason" | "decided_by" | "status">;

/** The audit trail (`tool_calls`), oldest first, as `hermes audit --json` reports its columns. */
export function auditRows(store: Store): AuditLine[] {
  return store.db
    .prepare("SELECT tool, args, decision, reason, decided_by, status FROM tool_calls ORDER BY created_at, step, seq")
    .all() as AuditLine[];
}
