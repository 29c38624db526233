import type { ApprovalRow } from "./approvals.js";
import type { AuditRow } from "./audit.js";
import type { Db } from "./db.js";
import type { RunRow } from "./history.js";
import { statements } from "./statements.js";

export type RecentRun = Omit<RunRow, "input"> & { session_key: string; asked: string | null };

export interface AuditFilter {
  session?: string;
  tool?: string;
  decision?: string;
  limit: number;
}

/** Read-only views over runs, the audit trail and approvals for the dashboard: newest first. */
export class RecentStore {
  private readonly q;

  constructor(db: Db) {
    this.q = statements(db, {
      runs: () =>
        db.prepare(
          "SELECT r.id, r.session_id, r.source, r.status, r.steps, r.stop_reason, r.reply, r.started_at, r.ended_at, r.tools, r.channel, r.attempts, r.reply_sent_at, s.key AS session_key, (SELECT content FROM messages m WHERE m.run_id = r.id AND m.role = 'user' ORDER BY m.id LIMIT 1) AS asked FROM runs r JOIN sessions s ON s.id = r.session_id ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?",
        ),
      audit: () =>
        db.prepare(
          "SELECT c.*, s.key AS session_key FROM tool_calls c JOIN sessions s ON s.id = c.session_id WHERE (@session IS NULL OR s.key = @session) AND (@tool IS NULL OR c.tool = @tool) AND (@decision IS NULL OR c.decision = @decision) ORDER BY c.created_at DESC, c.step DESC, c.seq DESC LIMIT @limit",
        ),
      decided: () => db.prepare("SELECT * FROM approvals WHERE status != 'pending' ORDER BY decided_at DESC LIMIT ?"),
    });
  }

  runs(limit: number): RecentRun[] {
    return this.q.runs.all(limit) as RecentRun[];
  }

  audit(f: AuditFilter): (AuditRow & { session_key: string })[] {
    return this.q.audit.all({
      session: f.session ?? null,
      tool: f.tool ?? null,
      decision: f.decision ?? null,
      limit: f.limit,
    }) as (AuditRow & {
      session_key: string;
    })[];
  }

  decidedApprovals(limit: number): ApprovalRow[] {
    return this.q.decided.all(limit) as ApprovalRow[];
  }
}
