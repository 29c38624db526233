import type { ApprovalRow } from "../store/approvals.js";
import type { DecideResult } from "./types.js";

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
