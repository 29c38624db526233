/**
 * The approval lifecycle, in one place. A gated call raises an approval: a row written before the owner
 * is asked, with a deadline. Connectors render the `approval_requested` event; a decision (a button, the
 * CLI, the dashboard, the deadline, a stop) settles the row exactly once, and the run it belongs to
 * resumes when nothing of it is pending any more. Everything is a row, so after a restart the deadlines
 * are armed again and requests nobody saw are shown again.
 */

import type { Config } from "../config/schema.js";
import type { Logger } from "../log.js";
import type { ToolCall } from "../model/types.js";
import { secretBytes } from "../random.js";
import type { ApprovalRow } from "../store/approvals.js";
import type { Store } from "../store/store.js";
import { canonicalJson } from "./canonical.js";
import { shownArgs } from "./shown-args.js";
import type { GateEvent, StepContext } from "./types.js";

export type ApprovalRequested = Extract<GateEvent, { type: "approval_requested" }>;
export type ApprovalDecided = Extract<GateEvent, { type: "approval_decided" }>;

/** The answer to an approval decision: the decided row, or why nothing changed. */
export type DecideResult =
  | { ok: true; approval: ApprovalRow; message: string }
  | { ok: false; code: "unknown" | "already_decided" | "expired"; message: string; approval?: ApprovalRow };

/** Told of every settled approval, with the row it settled. Must not throw. */
export type DecisionListener = (event: ApprovalDecided, approval: ApprovalRow) => void;

export interface ApprovalsDeps {
  store: Store;
  config: () => Config;
  log?: Logger;
}

type Settlement = "approved" | "denied" | "expired";

/** Raises, decides, expires and resumes approvals. One per daemon: the gate raises, the runner and connectors decide. */
export class Approvals {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Runs waiting for their approvals, by run id: each is resumed once, when the last one is settled. */
  private readonly waiting = new Map<string, () => void>();
  private readonly listeners: DecisionListener[] = [];
  /** False once a shutdown has let its runs go: a decision is still kept, and its run resumes at the next start. */
  private resuming = true;

  constructor(private readonly deps: ApprovalsDeps) {}

  /** Records the approval a call needs and arms its deadline; returns the event that asks the owner. */
  raise(ctx: StepContext, call: ToolCall, reason: string): ApprovalRequested {
    const timeoutS = this.deps.config().agent.confirm_timeout_s;
    const approval = this.deps.store.approvals.insert({
      id: newApprovalId(),
      run_id: ctx.runId,
      call_id: call.id,
      session_key: ctx.sessionKey,
      channel: ctx.channel,
      tool: call.name,
      args: canonicalJson(call.args ?? {}),
      reason,
      expires_at: Date.now() + timeoutS * 1000,
    });
    this.arm(approval);
    return requestEvent(approval, call.args, timeoutS);
  }

  /** True once an approval was raised for this call (decided or not). */
  raisedFor(callId: string): boolean {
    return this.deps.store.approvals.byCall(callId) !== undefined;
  }

  /** Approve or deny; a second decision, or one on an expired or unknown id, changes nothing and says why. */
  decide(approvalId: string, approve: boolean, by: string): DecideResult {
    const approval = this.deps.store.approvals.get(approvalId);
    if (!approval) return { ok: false, code: "unknown", message: `there is no approval ${approvalId}` };
    const closed = closedDecision(approval);
    if (closed) return closed;
    if (approval.expires_at <= Date.now()) {
      this.settle(approval, "expired", "timeout");
      return { ok: false, code: "expired", message: `approval ${approvalId} expired; the call did not run`, approval };
    }
    const decided = this.settle(approval, approve ? "approved" : "denied", by);
    if (!decided) return { ok: false, code: "already_decided", message: `approval ${approvalId} was decided meanwhile` };
    return { ok: true, approval: decided, message: `${approve ? "approved" : "denied"}: ${approval.tool}` };
  }

  /** Denies every open approval of a run (the user stopped it). */
  denyRun(runId: string, by: string): void {
    for (const approval of this.openOf(runId)) this.settle(approval, "denied", by);
  }

  /** Expires a run's open approvals without telling anyone: its client is gone (an ephemeral run after a restart). */
  expireQuietly(runId: string, by: string): void {
    const { store } = this.deps;
    store.db.transaction(() => {
      for (const approval of this.openOf(runId)) {
        const row = store.approvals.decide(approval.id, "expired", by);
        if (row) store.audit.decide(row.call_id, "expired", row.reason, by);
      }
    })();
  }

  pendingCount(runId: string): number {
    return this.deps.store.approvals.pendingCount(runId);
  }

  pendingTotal(): number {
    return this.deps.store.approvals.pending().length;
  }

  /** Resolves once nothing of the run is pending, or when `signal` aborts (the run was stopped). */
  settled(runId: string, signal: AbortSignal): Promise<void> {
    if (this.pendingCount(runId) === 0 || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const resume = () => {
        this.waiting.delete(runId);
        signal.removeEventListener("abort", resume);
        resolve();
      };
      this.waiting.set(runId, resume);
      signal.addEventListener("abort", resume, { once: true });
    });
  }

  onDecided(listener: DecisionListener): void {
    this.listeners.push(listener);
  }

  /** At start-up: the deadline of every open approval is armed again (a passed one expires at once). */
  armAll(): void {
    for (const approval of this.deps.store.approvals.pending()) this.arm(approval);
  }

  /** At shut-down: no deadline passes while the process stops; the next start arms them again. */
  disarmAll(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /**
   * At the end of a shutdown's grace: decisions (a press while the connectors close) are recorded, but wake
   * no run, whose call would run while the store closes under it; the next start resumes it and runs it once.
   */
  stopResuming(): void {
    this.resuming = false;
  }

  /** Open approvals no connector has shown (the process died in between), as the events that show them. */
  unshown(): { channel: string; event: ApprovalRequested }[] {
    return this.deps.store.approvals
      .pending()
      .filter((a) => !a.message_ref)
      .map((a) => {
        const remainingS = Math.max(1, (a.expires_at - Date.now()) / 1000) || this.deps.config().agent.confirm_timeout_s;
        return { channel: a.channel, event: requestEvent(a, JSON.parse(a.args) as unknown, remainingS) };
      });
  }

  private openOf(runId: string): ApprovalRow[] {
    return this.deps.store.approvals.pending().filter((a) => a.run_id === runId);
  }

  private arm(approval: ApprovalRow): void {
    clearTimeout(this.timers.get(approval.id));
    const delay = Math.max(0, approval.expires_at - Date.now());
    const timer = setTimeout(
      () => {
        this.timers.delete(approval.id);
        const current = this.deps.store.approvals.get(approval.id);
        if (current?.status !== "pending") return;
        // A deadline beyond setTimeout's longest delay (~24.8 days) is armed again until it has come.
        if (current.expires_at > Date.now()) this.arm(current);
        else this.settle(current, "expired", "timeout");
      },
      Math.min(delay, 2 ** 31 - 1),
    );
    timer.unref();
    this.timers.set(approval.id, timer);
  }

  /** Records a decision in the approval row and the audit trail, tells the listeners, and resumes the run when nothing is pending. */
  private settle(approval: ApprovalRow, status: Settlement, by: string): ApprovalRow | undefined {
    const { approvals, audit, db } = this.deps.store;
    const decided = db.transaction(() => {
      const row = approvals.decide(approval.id, status, by);
      if (row) audit.decide(row.call_id, status, row.reason, by);
      return row;
    })();
    if (!decided) return undefined;
    clearTimeout(this.timers.get(approval.id));
    this.timers.delete(approval.id);
    this.deps.log?.info({ approvalId: approval.id, tool: approval.tool, status, by }, "approval decided");
    const event = decidedEvent(decided, status, by);
    for (const listener of this.listeners) listener(event, decided);
    if (this.resuming && this.pendingCount(approval.run_id) === 0) this.waiting.get(approval.run_id)?.();
    return decided;
  }
}

/**
 * Why a decision on this approval changes nothing (it was decided, or it expired), or undefined when it
 * is still open to one. A button pressed twice, or after the deadline, gets this answer.
 */
export function closedDecision(approval: ApprovalRow): DecideResult | undefined {
  if (approval.status === "pending") return undefined;
  const when = approval.decided_at ? new Date(approval.decided_at).toISOString() : "earlier";
  if (approval.status === "expired") {
    const message = `approval ${approval.id} expired at ${new Date(approval.expires_at).toISOString()}; the call did not run`;
    return { ok: false, code: "expired", message, approval };
  }
  const message = `approval ${approval.id} was already ${approval.status} by ${approval.decided_by} at ${when}`;
  return { ok: false, code: "already_decided", message, approval };
}

/** Unguessable, short enough for Telegram's 64-byte callback data, and never starts with "-" (a CLI flag). */
export function newApprovalId(): string {
  return `ap${secretBytes(12).toString("base64url")}`;
}

export function approvalPrompt(call: Pick<ToolCall, "name" | "args">, reason: string, timeoutS: number): string {
  const args = shownArgs(call.args, 2);
  const minutes = timeoutS >= 120 ? `${Math.round(timeoutS / 60)} minutes` : `${Math.round(timeoutS)} seconds`;
  return `hermes wants to run ${call.name} with:\n${args}\nWhy this asks first: ${reason}.\nIf nobody answers within ${minutes} it will not run.`;
}

function requestEvent(a: ApprovalRow, args: unknown, timeoutS: number): ApprovalRequested {
  return {
    type: "approval_requested",
    runId: a.run_id,
    approvalId: a.id,
    callId: a.call_id,
    tool: a.tool,
    args,
    reason: a.reason,
    expiresAt: a.expires_at,
    prompt: approvalPrompt({ name: a.tool, args }, a.reason, timeoutS),
  };
}

function decidedEvent(a: ApprovalRow, decision: Settlement, by: string): ApprovalDecided {
  return { type: "approval_decided", runId: a.run_id, approvalId: a.id, callId: a.call_id, tool: a.tool, decision, by };
}
