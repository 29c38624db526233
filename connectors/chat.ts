/** What the chat connectors (Telegram, Discord) say alike: status lines, decisions, strangers. */
import type { DaemonStatus } from "../src/connector.js";
import type { ApprovalRow } from "../src/store/approvals.js";
import type { Store } from "../src/store/store.js";

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

/** Serializes one chat's API calls so messages and edits arrive in order; a failure is reported, never thrown. */
export function sendQueue(onError: (err: unknown, what: string) => void): (what: string, task: () => Promise<unknown>) => void {
  let chain: Promise<unknown> = Promise.resolve();
  return (what, task) => {
    chain = chain.then(task).catch((err: unknown) => onError(err, what));
  };
}

/** A typing indicator: `tick` now and every `everyMs` (chat networks let it fade) until stopped. */
export function typingIndicator(tick: () => void, everyMs: number): { start(): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      if (timer) return;
      tick();
      timer = setInterval(tick, everyMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
