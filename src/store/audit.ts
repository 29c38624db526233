import type { Db } from "./db.js";
import { statements } from "./statements.js";

export type Decision = "pending" | "auto" | "approved" | "denied" | "expired" | "blocked";
export type CallStatus = "proposed" | "running" | "ok" | "error" | "skipped" | "interrupted";

export interface AuditRow {
  id: string;
  run_id: string;
  session_id: number;
  session_key?: string;
  /** In listings: the model call that proposed this call (its step's usage), when recorded. */
  step_model?: string | null;
  step_endpoint?: string | null;
  step_prompt_tokens?: number | null;
  step_output_tokens?: number | null;
  step_tokens_estimated?: number | null;
  step: number;
  seq: number;
  tool: string;
  args: string;
  decision: Decision;
  reason: string | null;
  decided_by: string | null;
  decided_at: number | null;
  status: CallStatus;
  started_at: number | null;
  duration_ms: number | null;
  result_chars: number | null;
  result_hash: string | null;
  summary: string | null;
  error: string | null;
  created_at: number;
}

export interface ProposedCall {
  id: string;
  runId: string;
  sessionId: number;
  step: number;
  seq: number;
  tool: string;
  args: string;
}

/** The tool-call audit trail: one row per proposed call, updated as it is decided and run. */
export class AuditStore {
  private readonly q;

  constructor(db: Db) {
    this.q = statements(db, {
      insert: () =>
        db.prepare(
          "INSERT OR IGNORE INTO tool_calls (id, run_id, session_id, step, seq, tool, args, decision, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 'proposed', ?)",
        ),
      decide: () => db.prepare("UPDATE tool_calls SET decision = ?, reason = ?, decided_by = ?, decided_at = ? WHERE id = ?"),
      start: () => db.prepare("UPDATE tool_calls SET status = 'running', started_at = ? WHERE id = ?"),
      finish: () =>
        db.prepare(
          "UPDATE tool_calls SET status = ?, duration_ms = ?, result_chars = ?, result_hash = ?, summary = ?, error = ? WHERE id = ?",
        ),
      get: () => db.prepare("SELECT * FROM tool_calls WHERE id = ?"),
      ofRun: () => db.prepare("SELECT * FROM tool_calls WHERE run_id = ? ORDER BY step, seq"),
      interruptRunning: () => db.prepare("UPDATE tool_calls SET status = 'interrupted' WHERE status = 'running' RETURNING *"),
      list: () =>
        db.prepare(
          `SELECT c.*, s.key AS session_key, u.model AS step_model, u.endpoint AS step_endpoint, u.prompt_tokens AS step_prompt_tokens,
           u.output_tokens AS step_output_tokens, u.estimated AS step_tokens_estimated
         FROM tool_calls c JOIN sessions s ON s.id = c.session_id
         LEFT JOIN model_calls u ON u.id = (SELECT id FROM model_calls WHERE run_id = c.run_id AND step = c.step AND outcome = 'ok' LIMIT 1)
         WHERE (@key IS NULL OR s.key = @key) ORDER BY c.created_at DESC, c.step DESC, c.seq DESC LIMIT @limit`,
        ),
    });
  }

  propose(call: ProposedCall): void {
    this.q.insert.run(call.id, call.runId, call.sessionId, call.step, call.seq, call.tool, call.args, Date.now());
  }

  decide(id: string, decision: Decision, reason: string | null, by: string | null): void {
    this.q.decide.run(decision, reason, by, Date.now(), id);
  }

  markRunning(id: string): void {
    this.q.start.run(Date.now(), id);
  }

  finish(
    id: string,
    r: { status: CallStatus; durationMs: number; resultChars: number; resultHash: string; summary: string; error?: string },
  ): void {
    this.q.finish.run(r.status, Math.round(r.durationMs), r.resultChars, r.resultHash, r.summary, r.error ?? null, id);
  }

  get(id: string): AuditRow | undefined {
    return this.q.get.get(id) as AuditRow | undefined;
  }

  ofRun(runId: string): AuditRow[] {
    return this.q.ofRun.all(runId) as AuditRow[];
  }

  /** Calls that were executing when the process died: they may or may not have taken effect. */
  interruptRunning(): AuditRow[] {
    return this.q.interruptRunning.all() as AuditRow[];
  }

  /** Newest first, optionally for one session key. */
  list(sessionKey: string | undefined, limit: number): AuditRow[] {
    return this.q.list.all({ key: sessionKey ?? null, limit }) as AuditRow[];
  }
}
