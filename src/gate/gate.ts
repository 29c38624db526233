import type { Config } from "../config/schema.js";
import { listsTool } from "../config/tool-names.js";
import { z } from "../config/zod.js";
import type { ToolCall } from "../model/types.js";
import type { AuditRow } from "../store/audit.js";
import type { Store } from "../store/store.js";
import type { AnyTool } from "../tools/types.js";
import type { Approvals } from "./approvals.js";
import { callSignature, canonicalJson, shortHash } from "./canonical.js";
import { invokeTool, summarize, truncateResult } from "./invoke.js";
import { DENIED_RESULT, EXPIRED_RESULT, INTERRUPTED_RESULT, type StepContext, type StepResult } from "./types.js";

export interface GateDeps {
  store: Store;
  /** Where a call that needs the owner raises its approval. */
  approvals: Approvals;
  tools: () => Map<string, AnyTool>;
  config: () => Config;
  /** Why a tool that is not there is missing (its MCP server is not connected), when that is known. */
  missing?: (name: string) => string | undefined;
}

interface Admitted {
  call: ToolCall;
  tool: AnyTool;
  args: unknown;
  signature: string;
  approved?: boolean;
}

type Verdict = { kind: "run"; admitted: Admitted } | { kind: "answered" } | { kind: "pending" } | { kind: "stop"; message: string };

/** Decides and executes the tool calls of one step. The only caller of tool code. */
export class Gate {
  constructor(private readonly deps: GateDeps) {}

  /** Works through a step's calls; safe to call again for the same step after a restart or a decision. */
  async runStep(ctx: StepContext, calls: ToolCall[], answered: Set<string>): Promise<StepResult> {
    const toRun: Admitted[] = [];
    let pending = 0;
    for (const [seq, call] of calls.entries()) {
      if (answered.has(call.id)) continue;
      const verdict = await this.decide(ctx, call, seq);
      if (verdict.kind === "stop") {
        this.answerRemaining(ctx, calls, answered, `not run: the run was stopped (${verdict.message}).`);
        return { pending: 0, stop: verdict.message };
      }
      if (verdict.kind === "pending") pending++;
      if (verdict.kind === "run") toRun.push(verdict.admitted);
      if (verdict.kind === "answered") answered.add(call.id);
    }
    for (const batch of batches(toRun)) {
      await Promise.all(batch.map((a) => this.execute(ctx, a)));
      for (const a of batch) answered.add(a.call.id);
    }
    return { pending };
  }

  private async decide(ctx: StepContext, call: ToolCall, seq: number): Promise<Verdict> {
    const audit = this.deps.store.audit;
    let row = audit.get(call.id);
    // The loop gives each call a fresh id; a row of another call under this one's id is never taken as its decision.
    if (row && (row.run_id !== ctx.runId || row.tool !== call.name || row.args !== argsText(call))) {
      return this.answerWith(ctx, call, "error: this call's id is another call's; it was not run. Send the call again.");
    }
    if (!row) {
      audit.propose({
        id: call.id,
        runId: ctx.runId,
        sessionId: ctx.sessionId,
        step: ctx.step,
        seq,
        tool: call.name,
        args: argsText(call),
      });
      ctx.emit({ type: "tool_call", runId: ctx.runId, callId: call.id, tool: call.name, args: call.args, step: ctx.step });
      row = audit.get(call.id) as AuditRow;
    }
    return row.decision === "pending" && !this.deps.approvals.raisedFor(call.id)
      ? this.judgeNew(ctx, call)
      : this.resumeDecided(ctx, call, row);
  }

  /** A call seen for the first time: existence, arguments, loops, then the confirmation policy. */
  private async judgeNew(ctx: StepContext, call: ToolCall): Promise<Verdict> {
    const tool = this.toolFor(ctx, call.name);
    if (call.parseError) {
      return this.refuse(ctx, call, "malformed call", `error: ${call.parseError}. Send the call again as valid JSON.`);
    }
    if (!tool) return this.refuse(ctx, call, "unknown tool", this.missingText(ctx, call.name));
    const parsed = tool.input.safeParse(call.args ?? {});
    if (!parsed.success) {
      const detail = z.prettifyError(parsed.error);
      return this.refuse(ctx, call, "invalid arguments", `error: invalid arguments for ${tool.name}:\n${detail}`);
    }
    const signature = callSignature(call.name, parsed.data);
    const verdict = ctx.guard.check(call.name, signature, `${call.name} ${canonicalJson(call.args ?? {})}`);
    if (verdict.kind === "stop") {
      const text = `blocked: the run was stopped: ${verdict.message}.`;
      this.deps.store.audit.decide(call.id, "blocked", verdict.reason, "hermes");
      this.skip(call.id, text);
      this.answer(ctx, call, text);
      ctx.emit({ type: "blocked", runId: ctx.runId, callId: call.id, tool: call.name, reason: verdict.reason });
      return { kind: "stop", message: verdict.message };
    }
    if (verdict.kind === "block") {
      ctx.guard.recordBlock(call.name, signature, verdict.reason);
      return this.refuse(ctx, call, verdict.reason, verdict.message);
    }
    const reason = await this.confirmationReason(tool, parsed.data, ctx.runId);
    // Counted when asked, not when run: identical gated calls of one step are asked (and run) at most
    // repeat_limit times, and a call the owner denied does not come back as a new question at every step.
    ctx.guard.admit(signature);
    // The owner is shown the arguments the tool will run with: as its schema reads them (a URL without the
    // line breaks zod drops from it, defaults filled in), not as the model wrote them.
    if (reason) return this.requestApproval(ctx, { ...call, args: parsed.data }, reason);
    this.deps.store.audit.decide(call.id, "auto", null, "policy");
    return { kind: "run", admitted: { call, tool, args: parsed.data, signature } };
  }

  /** A call that was decided before (possibly by an earlier process): carry the decision out once. */
  private resumeDecided(ctx: StepContext, call: ToolCall, row: AuditRow): Verdict {
    if (row.status === "running" || row.status === "interrupted") {
      this.deps.store.audit.finish(call.id, {
        status: "interrupted",
        durationMs: row.duration_ms ?? 0,
        resultChars: 0,
        resultHash: "",
        summary: "interrupted",
      });
      return this.answerWith(ctx, call, INTERRUPTED_RESULT);
    }
    if (row.status !== "proposed") return this.answerWith(ctx, call, row.summary ?? "done");
    switch (row.decision) {
      case "pending":
        return { kind: "pending" };
      case "denied":
        this.skip(call.id, "denied by the user");
        return this.answerWith(ctx, call, DENIED_RESULT);
      case "expired":
        this.skip(call.id, "expired");
        return this.answerWith(ctx, call, EXPIRED_RESULT);
      default: {
        const tool = this.toolFor(ctx, call.name);
        const parsed = tool?.input.safeParse(call.args ?? {});
        if (!tool || !parsed?.success) return this.answerWith(ctx, call, `error: ${call.name} is no longer available`);
        const signature = callSignature(call.name, parsed.data);
        if (row.decision !== "approved") ctx.guard.admit(signature); // an approved one was counted when asked
        return { kind: "run", admitted: { call, tool, args: parsed.data, signature, approved: row.decision === "approved" } };
      }
    }
  }

  private async confirmationReason(tool: AnyTool, args: unknown, runId: string): Promise<string | undefined> {
    if (listsTool(this.deps.config().agent.confirm, tool.name)) return `${tool.name} always needs your confirmation (agent.confirm)`;
    const needs = typeof tool.needsConfirmation === "function" ? await tool.needsConfirmation(args, { runId }) : tool.needsConfirmation;
    return needs ? (tool.confirmReason ?? `${tool.name} asks for confirmation for these arguments`) : undefined;
  }

  private requestApproval(ctx: StepContext, call: ToolCall, reason: string): Verdict {
    ctx.emit(this.deps.approvals.raise(ctx, call, reason));
    return { kind: "pending" };
  }

  /** Runs one admitted call; its audit row and its result message are written in one transaction. */
  private async execute(ctx: StepContext, a: Admitted): Promise<void> {
    const audit = this.deps.store.audit;
    audit.markRunning(a.call.id);
    const result = await invokeTool(a.tool, a.args, {
      signal: ctx.signal,
      sessionKey: ctx.sessionKey,
      channel: ctx.channel,
      runId: ctx.runId,
      callId: a.call.id,
      approved: a.approved === true,
    });
    const content = truncateResult(result.content, a.tool.maxResultChars);
    const hash = shortHash(result.content);
    const summary = summarize(result.content);
    this.deps.store.db.transaction(() => {
      audit.finish(a.call.id, {
        status: result.ok ? "ok" : "error",
        durationMs: result.durationMs,
        resultChars: result.content.length,
        resultHash: hash,
        summary,
        ...(result.ok ? {} : { error: summary }),
      });
      this.answer(ctx, a.call, content);
    })();
    ctx.guard.recordResult(a.call.name, a.signature, result.ok, hash, result.ok ? undefined : summary);
    ctx.emit({
      type: "tool_result",
      runId: ctx.runId,
      callId: a.call.id,
      tool: a.call.name,
      ok: result.ok,
      summary,
      durationMs: Math.round(result.durationMs),
    });
  }

  private refuse(ctx: StepContext, call: ToolCall, reason: string, text: string): Verdict {
    this.deps.store.audit.decide(call.id, "blocked", reason, "hermes");
    this.skip(call.id, text);
    ctx.emit({ type: "blocked", runId: ctx.runId, callId: call.id, tool: call.name, reason });
    return this.answerWith(ctx, call, text);
  }

  private skip(callId: string, summary: string): void {
    this.deps.store.audit.finish(callId, { status: "skipped", durationMs: 0, resultChars: 0, resultHash: "", summary: summarize(summary) });
  }

  private answerWith(ctx: StepContext, call: ToolCall, text: string): Verdict {
    this.answer(ctx, call, text);
    return { kind: "answered" };
  }

  private answer(ctx: StepContext, call: ToolCall, content: string): void {
    this.deps.store.history.appendMessage(ctx.sessionId, ctx.runId, { role: "tool", content, toolCallId: call.id, toolName: call.name });
  }

  private answerRemaining(ctx: StepContext, calls: ToolCall[], answered: Set<string>, text: string): void {
    for (const call of calls) {
      const row = answered.has(call.id) ? undefined : this.deps.store.audit.get(call.id);
      if (!row || row.decision === "blocked") continue;
      this.skip(call.id, text);
      this.answer(ctx, call, text);
      answered.add(call.id);
    }
  }

  /**
   * The repeat guard's signature of a call the audit trail holds (`argsJson`, as the model sent them), made
   * as judgeNew makes a live one: from the arguments as the tool's schema reads them, its defaults filled
   * in. A resumed run (after an approval, or a restart) rebuilds its counts from these, which must be the
   * live ones: else a call's count started again at every approval.
   */
  signatureOf(toolName: string, argsJson: string): string {
    try {
      const parsed = this.deps.tools().get(toolName)?.input.safeParse(JSON.parse(argsJson));
      if (parsed?.success) return callSignature(toolName, parsed.data);
    } catch {
      // not JSON (a malformed call's error text): never admitted, its own text is its signature
    }
    return `${toolName} ${argsJson}`;
  }

  private toolFor(ctx: StepContext, name: string): AnyTool | undefined {
    if (ctx.allowedTools && !ctx.allowedTools.has(name)) return undefined;
    return this.deps.tools().get(name);
  }

  private missingText(ctx: StepContext, name: string): string {
    const mayUse = !ctx.allowedTools || ctx.allowedTools.has(name);
    return (mayUse && this.deps.missing?.(name)) || this.unknownToolText(ctx, name);
  }

  private unknownToolText(ctx: StepContext, name: string): string {
    const all = [...this.deps.tools().keys()].filter((n) => !ctx.allowedTools || ctx.allowedTools.has(n));
    const names = all.sort().join(", ") || "none";
    return `error: there is no tool named '${name}'. Tools that exist: ${names}.`;
  }
}

/** Consecutive read-only calls run together; a call with side effects runs alone, in order. */
function batches(calls: Admitted[]): Admitted[][] {
  const out: Admitted[][] = [];
  for (const a of calls) {
    const last = out.at(-1);
    if (a.tool.readOnly && last?.[0]?.tool.readOnly) last.push(a);
    else out.push([a]);
  }
  return out;
}

function argsText(call: ToolCall): string {
  return call.args === undefined ? JSON.stringify(call.parseError ?? "unparseable") : canonicalJson(call.args);
}
