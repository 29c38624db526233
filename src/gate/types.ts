/**
 * The gate's contracts. The gate is the only code that executes tools: every call passes
 * validation, the repeat guard and the confirmation policy first, and leaves an audit row.
 */

import type { RepeatGuard } from "./repeat-guard.js";

/** The events of a run the gate emits: a call proposed, blocked, waiting for the owner, decided, done. */
export type GateEvent =
  | { type: "tool_call"; runId: string; callId: string; tool: string; args: unknown; step: number }
  | {
      type: "approval_requested";
      runId: string;
      approvalId: string;
      callId: string;
      tool: string;
      args: unknown;
      reason: string;
      expiresAt: number;
      prompt: string;
    }
  | {
      type: "approval_decided";
      runId: string;
      approvalId: string;
      callId: string;
      tool: string;
      decision: "approved" | "denied" | "expired";
      by: string;
    }
  | { type: "tool_result"; runId: string; callId: string; tool: string; ok: boolean; summary: string; durationMs: number }
  | { type: "blocked"; runId: string; callId: string; tool: string; reason: string };

/** Everything the gate needs to know about the step it is working on. */
export interface StepContext {
  runId: string;
  sessionId: number;
  sessionKey: string;
  /** Where approval requests are shown: the chat of the run, or a scheduled job's delivery target. */
  channel: string;
  /** When set, the only tools this run may use. */
  allowedTools?: Set<string>;
  step: number;
  signal: AbortSignal;
  guard: RepeatGuard;
  emit: (event: GateEvent) => void;
}

export interface StepResult {
  /** Gated calls still waiting for a human decision; the run is suspended while this is > 0. */
  pending: number;
  /** Set when the run must stop (a call or a failing tool came back after it was blocked): what happened. */
  stop?: string;
}

/** Text the model gets for a call a human turned down or nobody answered. */
export const DENIED_RESULT = "the user denied this call; it did not run. Tell the user, and do not try it again in another way.";
export const EXPIRED_RESULT = "nobody answered the confirmation request in time, so this call did not run. Tell the user it was not done.";
export const INTERRUPTED_RESULT =
  "interrupted: hermes stopped while this call was running; it may or may not have taken effect. Tell the user and check before retrying.";
