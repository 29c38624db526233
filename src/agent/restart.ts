/**
 * What a restart owes the chats once the connectors are up: approval requests that were recorded but
 * never shown, and final replies that were never sent (the process died in between).
 */
import type { Logger } from "pino";
import type { Config } from "../config/schema.js";
import { approvalPrompt } from "../gate/gate.js";
import type { Store } from "../store/store.js";
import type { AgentEvent, EventListener, StopReason } from "./types.js";

/** A chat reply owed for longer than this is not sent after a restart: the moment has passed. */
const OWED_REPLY_MAX_AGE_MS = 24 * 3_600_000;

interface RestartDeps {
  store: Store;
  log: Logger;
  config: () => Config;
  fallbackListener: (channel: string) => EventListener | undefined;
}

/** Pending approvals never shown, as the events that show them, with the channel each belongs to. */
export function unshownApprovals(deps: RestartDeps): { channel: string; event: AgentEvent & { type: "approval_requested" } }[] {
  const timeoutS = deps.config().agent.confirm_timeout_s;
  return deps.store.approvals
    .pending()
    .filter((a) => !a.message_ref)
    .map((a) => {
      const args = JSON.parse(a.args) as unknown;
      const remainingS = Math.max(1, (a.expires_at - Date.now()) / 1000) || timeoutS;
      const prompt = approvalPrompt({ id: a.call_id, name: a.tool, args }, a.reason, remainingS);
      return {
        channel: a.channel,
        event: {
          type: "approval_requested",
          runId: a.run_id,
          approvalId: a.id,
          callId: a.call_id,
          tool: a.tool,
          args,
          reason: a.reason,
          expiresAt: a.expires_at,
          prompt,
        },
      };
    });
}

/**
 * Sends the final replies of chat runs that ended but were never sent (the process died in between,
 * or the chat network refused them). `inFlight`: runs of this process whose send may still be under
 * way. Replies older than a day, or for a connector that is off, are dropped with a warning.
 */
export function sendOwedReplies(deps: RestartDeps, inFlight: Set<string>): void {
  const { history } = deps.store;
  for (const run of history.unsentReplies()) {
    if (inFlight.has(run.id)) continue;
    const channel = run.channel ?? "";
    const listener = deps.fallbackListener(channel);
    if (!listener || Date.now() - (run.ended_at ?? 0) > OWED_REPLY_MAX_AGE_MS) {
      deps.log.warn({ runId: run.id, channel }, "a reply that was never sent is dropped (too old, or its connector is off)");
      history.markReplySent(run.id);
      continue;
    }
    deps.log.info({ runId: run.id, channel }, "sending a reply the previous process could not send");
    listener({ type: "run_end", runId: run.id, reply: run.reply ?? "", stopReason: (run.stop_reason ?? "done") as StopReason });
  }
}

/**
 * An ephemeral run found after a restart (an API request without a session): its conversation was in
 * memory only and its client is gone, so it ends as interrupted and its open approvals expire. Returns true.
 */
export function abandonEphemeral(store: Store, runId: string): true {
  store.db.transaction(() => {
    for (const approval of store.approvals.pending().filter((a) => a.run_id === runId)) {
      const row = store.approvals.decide(approval.id, "expired", "restart");
      if (row) store.audit.decide(row.call_id, "expired", row.reason, "restart");
    }
    store.history.endRun(runId, "interrupted", "interrupted", "");
  })();
  return true;
}
