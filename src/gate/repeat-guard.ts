import type { AuditRow } from "../store/audit.js";

export interface GuardLimits {
  /** Executions allowed per identical call (same tool + same canonical args) in one run. */
  repeatLimit: number;
  /** Failures in a row after which a tool is blocked for the rest of the run. */
  failureLimit: number;
}

export type GuardVerdict =
  | { kind: "allow" }
  | { kind: "block"; reason: "repeated call" | "repeated cycle" | "failing tool"; message: string }
  /** The run must stop; `reason` is what the audit trail records for the call that was not executed. */
  | { kind: "stop"; reason: "repeated after block" | "failing tool after block"; message: string };

/** Decisions of a call that was asked and answered: each counts toward repeat_limit, whatever the answer. */
const ASKED = new Set(["approved", "denied", "expired"]);

/**
 * Keeps a run from looping. Its state is rebuilt from the audit trail when a run resumes,
 * so a restart never resets the counts.
 */
export class RepeatGuard {
  private readonly executions = new Map<string, number>();
  private readonly blocked = new Set<string>();
  private readonly failuresInRow = new Map<string, number>();
  private readonly lastError = new Map<string, string>();
  private readonly results = new Map<string, Set<string>>();
  /** Every call proposed past validation, executed or blocked, in order. */
  private readonly attempts: string[] = [];

  constructor(private readonly limits: GuardLimits) {}

  /** `signatureOf` makes a row's signature as the live check made it (Gate.signatureOf). */
  static fromAudit(
    rows: AuditRow[],
    limits: GuardLimits,
    signatureOf: (tool: string, argsJson: string) => string = (tool, args) => `${tool} ${args}`,
  ): RepeatGuard {
    const guard = new RepeatGuard(limits);
    for (const row of rows) {
      const signature = signatureOf(row.tool, row.args);
      if (row.decision === "blocked" && row.reason && GUARD_REASONS.has(row.reason)) guard.recordBlock(row.tool, signature, row.reason);
      else if (row.decision === "auto" || ASKED.has(row.decision)) {
        // An asked call counts from its question on (the live check counts it then); an automatic one once it ran.
        if (row.status !== "proposed" || row.decision !== "auto") guard.admit(signature);
        if (row.status === "ok" || row.status === "error")
          guard.recordResult(row.tool, signature, row.status === "ok", row.result_hash ?? "", row.error ?? undefined);
      }
    }
    return guard;
  }

  check(tool: string, signature: string, shownCall: string): GuardVerdict {
    const reblocked = this.blocked.has(signature) || this.blocked.has(failKey(tool));
    const verdict = this.judge(tool, signature);
    if (verdict.kind !== "block" || !reblocked) return verdict;
    if (verdict.reason === "failing tool") return { kind: "stop", reason: "failing tool after block", message: this.failingMessage(tool) };
    return {
      kind: "stop",
      reason: "repeated after block",
      message: `the model kept repeating ${shownCall} after it was blocked (${verdict.reason}); the call was not executed again`,
    };
  }

  private failingMessage(tool: string): string {
    const failures = this.failuresInRow.get(tool) ?? 0;
    const last = this.lastError.get(tool);
    return `${tool} failed ${failures} times in a row${last ? ` (last error: ${last})` : ""}, so hermes stopped calling it`;
  }

  recordBlock(tool: string, signature: string, reason: string): void {
    this.blocked.add(reason === "failing tool" ? failKey(tool) : signature);
    this.attempts.push(signature);
  }

  /** Counts an execution as soon as it is decided, so duplicates within one step are limited too. */
  admit(signature: string): void {
    this.executions.set(signature, (this.executions.get(signature) ?? 0) + 1);
    this.attempts.push(signature);
  }

  recordResult(tool: string, signature: string, ok: boolean, resultHash: string, error?: string): void {
    this.failuresInRow.set(tool, ok ? 0 : (this.failuresInRow.get(tool) ?? 0) + 1);
    if (!ok && error) this.lastError.set(tool, error);
    const seen = this.results.get(signature) ?? new Set<string>();
    seen.add(resultHash);
    this.results.set(signature, seen);
  }

  private judge(tool: string, signature: string): GuardVerdict {
    const failures = this.failuresInRow.get(tool) ?? 0;
    if (failures >= this.limits.failureLimit) {
      return {
        kind: "block",
        reason: "failing tool",
        message: `blocked: ${tool} failed ${failures} times in a row in this run and is disabled until the run ends. Do not call it again; tell the user what went wrong.`,
      };
    }
    const count = this.executions.get(signature) ?? 0;
    if (count >= this.limits.repeatLimit) {
      return {
        kind: "block",
        reason: "repeated call",
        message: `blocked: repeated call. ${tool} with these exact arguments already ran ${count} times in this run. Do not call it again; use the result you already have and answer the user.`,
      };
    }
    if (this.continuesCycle(signature)) {
      return {
        kind: "block",
        reason: "repeated cycle",
        message: `blocked: repeated cycle. The same calls keep alternating without new results. Stop calling ${tool}; answer with what you have.`,
      };
    }
    return { kind: "allow" };
  }

  /** True when the attempts end in A,B,A,B (B being `signature`'s partner) and neither call ever gave a new result. */
  private continuesCycle(signature: string): boolean {
    const a = this.attempts;
    if (a.length < 4) return false;
    const [s4, s3, s2, s1] = a.slice(-4) as [string, string, string, string];
    const cycling = s4 === signature && s2 === signature && s3 === s1 && s1 !== signature;
    return cycling && this.unchanged(signature) && this.unchanged(s1);
  }

  private unchanged(signature: string): boolean {
    return (this.results.get(signature)?.size ?? 0) <= 1;
  }
}

const GUARD_REASONS = new Set(["repeated call", "repeated cycle", "failing tool"]);

function failKey(tool: string): string {
  return `\u0000failing:${tool}`;
}
