import type { Db } from "./db.js";
import { statements } from "./statements.js";

export type ApprovalStatus = "pending" | "approved" | "denied" | "expired";

export interface ApprovalRow {
  id: string;
  run_id: string;
  call_id: string;
  session_key: string;
  channel: string;
  tool: string;
  args: string;
  reason: string;
  status: ApprovalStatus;
  created_at: number;
  expires_at: number;
  decided_by: string | null;
  decided_at: number | null;
  message_ref: string | null;
}

export type NewApproval = Omit<ApprovalRow, "status" | "decided_by" | "decided_at" | "message_ref" | "created_at">;

/** Pending approvals are rows: they outlive the process that asked. */
export class ApprovalStore {
  private readonly q;

  constructor(db: Db) {
    this.q = statements(db, {
      insert: () =>
        db.prepare(
          "INSERT INTO approvals (id, run_id, call_id, session_key, channel, tool, args, reason, status, created_at, expires_at) VALUES (@id, @run_id, @call_id, @session_key, @channel, @tool, @args, @reason, 'pending', @created_at, @expires_at)",
        ),
      get: () => db.prepare("SELECT * FROM approvals WHERE id = ?"),
      byCall: () => db.prepare("SELECT * FROM approvals WHERE call_id = ?"),
      decide: () =>
        db.prepare("UPDATE approvals SET status = ?, decided_by = ?, decided_at = ? WHERE id = ? AND status = 'pending' RETURNING *"),
      pending: () => db.prepare("SELECT * FROM approvals WHERE status = 'pending' ORDER BY created_at"),
      pendingOfRun: () => db.prepare("SELECT COUNT(*) FROM approvals WHERE run_id = ? AND status = 'pending'").pluck(),
      setMessageRef: () => db.prepare("UPDATE approvals SET message_ref = ? WHERE id = ?"),
    });
  }

  insert(row: NewApproval): ApprovalRow {
    this.q.insert.run({ ...row, created_at: Date.now() });
    return this.get(row.id) as ApprovalRow;
  }

  get(id: string): ApprovalRow | undefined {
    return this.q.get.get(id) as ApprovalRow | undefined;
  }

  byCall(callId: string): ApprovalRow | undefined {
    return this.q.byCall.get(callId) as ApprovalRow | undefined;
  }

  /** Decides a pending approval; returns undefined when it was not pending (decided before, expired, unknown). */
  decide(id: string, status: Exclude<ApprovalStatus, "pending">, by: string): ApprovalRow | undefined {
    return this.q.decide.get(status, by, Date.now(), id) as ApprovalRow | undefined;
  }

  pending(): ApprovalRow[] {
    return this.q.pending.all() as ApprovalRow[];
  }

  pendingCount(runId: string): number {
    return this.q.pendingOfRun.get(runId) as number;
  }

  setMessageRef(id: string, ref: string): void {
    this.q.setMessageRef.run(ref, id);
  }
}
