/** What every chat connector says alike: status lines, decisions, strangers. */
import type { DaemonStatus } from "../../src/connector.js";
import type { ApprovalRow } from "../../src/store/approvals.js";
import type { Store } from "../../src/store/store.js";

const STRANGER_NOTICE_EVERY_MS = 3_600_000;

const DECISION_TEXT = {
  approved: "✅ Approved",
  denied: "❌ Denied",
  expired: "⌛ Expired: nobody answered in time, it did not run",
} as const;

export type Decision = keyof typeof DECISION_TEXT;

export function statusLines(s: DaemonStatus): string {
  return [
    `hermes ${s.version}, up ${Math.round(s.uptime_s / 60)} min`,
    `model: ${s.model.reachable ? "reachable" : "unreachable"} (${s.model.detail})`,
    ...s.connectors.map((c) => `${c.name}: ${c.ok ? "ok" : "down"} (${c.detail})`),
    `runs: ${s.runs.running} running, ${s.runs.queued} queued; approvals pending: ${s.pending_approvals}`,
    ...(s.speech ? [`voice notes: ${s.speech.ok === null ? "off" : s.speech.ok ? "ok" : "down"} (${s.speech.detail})`] : []),
    ...(s.vision ? [`photos: ${s.vision.detail}`] : []),
  ].join("\n");
}

/** The text an approval message is edited into once decided: the call, the decision and who made it. */
export function decisionText(approval: ApprovalRow, decision: Decision, by: string): string {
  const who = decision === "expired" ? "" : ` by ${by}`;
  return `${approval.tool} ${approval.args}\n${DECISION_TEXT[decision]}${who}`;
}

/** True at most once an hour per user: strangers get one short notice, then silence. */
export function strangerNoticeDue(store: Store, connector: string, userId: string | number): boolean {
  const key = `${connector}:stranger:${userId}`;
  const last = Number(store.inbound.value(key) ?? 0);
  if (Date.now() - last < STRANGER_NOTICE_EVERY_MS) return false;
  store.inbound.setValue(key, String(Date.now()));
  return true;
}

/** Fits text in one message, keeping its last two lines (for an approval: the reason and the deadline). */
export function fitText(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const tail = text.split("\n").slice(-2).join("\n");
  return `${text.slice(0, Math.max(0, limit - tail.length - 2))}…\n${tail}`.slice(0, limit);
}
