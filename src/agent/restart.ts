/**
 * What a restart owes the chats once the connectors are up: final replies that were never sent (the
 * process died in between). Approval requests nobody saw are the approvals' (gate/approvals.ts).
 */
import type { Logger } from "pino";
import type { Approvals } from "../gate/approvals.js";
import { removeImages } from "../media/images.js";
import type { Store } from "../store/store.js";
import type { EventListener, StopReason } from "./types.js";

/** A chat reply owed for longer than this is not sent after a restart: the moment has passed. */
const OWED_REPLY_MAX_AGE_MS = 24 * 3_600_000;

interface RestartDeps {
  store: Store;
  log: Logger;
  fallbackListener: (channel: string, replyTo?: string) => EventListener | undefined;
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
    const listener = deps.fallbackListener(channel, run.reply_to ?? undefined);
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
 * memory only and its client is gone, so it ends as interrupted, its open approvals expire, and its images
 * (kept only for the request) are removed. Returns true.
 */
export function abandonEphemeral(
  store: Store,
  approvals: Approvals,
  run: { id: string; images: string | null },
  storagePath: string,
): true {
  store.db.transaction(() => {
    approvals.expireQuietly(run.id, "restart");
    store.history.endRun(run.id, "interrupted", "interrupted", "");
  })();
  if (run.images) removeImages(storagePath, JSON.parse(run.images) as string[]);
  return true;
}
