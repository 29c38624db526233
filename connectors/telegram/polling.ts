import type { UpdateSupplier } from "@grammyjs/runner";
import { type Api, GrammyError, HttpError } from "grammy";
import type { Update } from "grammy/types";
import { isDiskFull } from "../../src/errors.js";
import type { Logger } from "../../src/log.js";
import { sleep } from "../../src/net/sleep.js";
import type { InboundStore } from "../../src/store/inbound.js";

export interface PollerHealth {
  ok: boolean;
  detail: string;
  /** A problem only the owner can fix (a bad token): restarting the daemon would not help. */
  needsOwner?: boolean;
  /** Telegram cannot be reached but every attempt ends and the next is due: a restart would not help either. */
  retrying?: boolean;
}

const DISK_FULL_RETRY_MS = 5000;
/** How long past its due time an attempt may be late before the poller counts as stuck. */
const STUCK_GRACE_MS = 5000;

/**
 * The updates asked for. Not edited messages: nothing handles them (an edit is not a new message to
 * answer), and each one asked for was kept in the journal for good, a stranger's text included.
 */
export const ALLOWED_UPDATES = ["message", "callback_query"] as const;

/**
 * Long polling that never goes deaf: each batch is recorded in SQLite (with the next offset) before the
 * next getUpdates call acknowledges it; a getUpdates that does not return in time is abandoned and
 * reissued; 401 and 409 are reported with their fix instead of being retried blindly.
 */
export function createPoller(o: {
  api: Api;
  store: InboundStore;
  log: Logger;
  pollTimeoutS: number;
  /** Updates that could not be recorded because the disk is full (they will be fetched again). */
  onDiskFull?: (updates: Update[]) => Promise<void>;
}) {
  const stallMs = o.pollTimeoutS * 1000 + Math.min(10_000, Math.max(1000, o.pollTimeoutS * 500));
  /** When the next getUpdates attempt must have ended (returned, failed or been abandoned) at the latest. */
  let dueBy = Date.now() + stallMs + STUCK_GRACE_MS;
  const due = (waitMs = 0) => {
    dueBy = Date.now() + waitMs + stallMs + STUCK_GRACE_MS;
  };
  /** The current failure streak: since when, and the latest cause (one log line per streak, not per attempt). */
  let offline: { since: number; cause: string } | undefined;
  let restarts = 0;
  let lastRestartAt: number | undefined;
  let fatal: string | undefined;
  let conflict: string | undefined;
  let failures = 0;

  const wentOffline = (cause: string) => {
    if (!offline) o.log.warn({ cause }, "telegram offline; retrying");
    offline = { since: offline?.since ?? Date.now(), cause };
  };
  const cameBack = () => {
    if (offline) o.log.info({ offlineS: Math.round((Date.now() - offline.since) / 1000) }, "telegram back online");
    offline = undefined;
  };

  async function fetchOnce(batchSize: number, signal: AbortSignal): Promise<Update[] | undefined> {
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    let stalled = false;
    due();
    const timer = setTimeout(() => {
      stalled = true;
      controller.abort();
    }, stallMs);
    try {
      const updates = await o.api.getUpdates(
        {
          offset: o.store.offset("telegram"),
          limit: Math.max(1, Math.min(batchSize, 100)),
          timeout: o.pollTimeoutS,
          allowed_updates: [...ALLOWED_UPDATES],
        },
        // grammY types its signal with a polyfill; the runtime object is the platform's AbortSignal.
        controller.signal as never,
      );
      due();
      failures = 0;
      conflict = undefined;
      cameBack();
      return updates;
    } catch (err) {
      if (signal.aborted) throw err;
      await handleFailure(err, stalled, signal);
      return undefined;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    }
  }

  async function handleFailure(err: unknown, stalled: boolean, signal: AbortSignal): Promise<void> {
    if (stalled) {
      restarts++;
      lastRestartAt = Date.now();
      o.log.warn({ restarts, stallMs }, "telegram getUpdates made no progress; restarted polling");
      offline = { since: offline?.since ?? Date.now(), cause: `getUpdates gave no answer in ${Math.round(stallMs / 1000)} s` };
      return;
    }
    if (err instanceof GrammyError && err.error_code === 401) {
      fatal = "Telegram rejected the bot token (401): set TELEGRAM_BOT_TOKEN to the token from @BotFather";
      o.log.error({ code: 401 }, fatal);
      return;
    }
    if (err instanceof GrammyError && err.error_code === 409) {
      if (!conflict) o.log.error({ code: 409 }, "another program is polling this bot (409): stop it, or remove its webhook");
      conflict = "another program is polling this bot (409 Conflict); stop the other instance";
      due(Math.min(30_000, o.pollTimeoutS * 1000));
      await sleep(Math.min(30_000, o.pollTimeoutS * 1000), signal);
      return;
    }
    failures++;
    const wait = Math.min(60_000, 500 * 2 ** Math.min(failures, 7));
    wentOffline(causeOf(err));
    o.log.debug({ cause: offline?.cause, failures, waitMs: wait }, "telegram getUpdates failed; retrying");
    due(wait);
    await sleep(wait, signal);
  }

  const supplier: UpdateSupplier<Update> = {
    async supply(batchSize, runnerSignal) {
      const signal = runnerSignal as unknown as AbortSignal;
      for (;;) {
        if (fatal) {
          await sleep(3_600_000, signal);
          if (signal.aborted) return [];
          continue;
        }
        const updates = await fetchOnce(batchSize, signal);
        if (!updates?.length) {
          if (signal.aborted) return [];
          continue;
        }
        let fresh: Update[];
        try {
          fresh = o.store.recordBatch("telegram", updates, chatOf);
        } catch (err) {
          if (!isDiskFull(err)) throw err;
          // Not acknowledged: Telegram keeps the updates and hands them out again once there is room.
          o.log.error({ err, updates: updates.length }, "the disk is full: Telegram updates stay unacknowledged until there is room");
          await o.onDiskFull?.(updates);
          due(DISK_FULL_RETRY_MS);
          await sleep(DISK_FULL_RETRY_MS, signal);
          if (signal.aborted) return [];
          continue;
        }
        if (fresh.length) return fresh;
      }
    },
  };

  return {
    supplier,
    health(): PollerHealth {
      if (fatal) return { ok: false, detail: fatal, needsOwner: true };
      // Only the owner can stop the other program: a restart by the watchdog would not, so it is not asked for.
      if (conflict) return { ok: false, detail: conflict, needsOwner: true };
      const restarted = restarts ? `; polling restarted ${restarts}× (last ${new Date(lastRestartAt ?? 0).toISOString()})` : "";
      // Stuck: no attempt ended when one was due. Only this stops the watchdog pings; an outage does not.
      const late = Date.now() - dueBy;
      if (late > 0)
        return { ok: false, detail: `getUpdates is stuck: an attempt due by ${new Date(dueBy).toISOString()} has not ended${restarted}` };
      if (offline) {
        const since = new Date(offline.since).toISOString();
        return { ok: false, retrying: true, detail: `offline since ${since}, retrying (${offline.cause})${restarted}` };
      }
      return { ok: true, detail: `polling${restarted}` };
    },
    /** Marks the token as rejected (seen at start-up by getMe). */
    setFatal(message: string) {
      fatal = message;
    },
  };
}

/** The cause worth showing: the network error under grammY's wrapper (connect ECONNREFUSED …, getaddrinfo ENOTFOUND …). */
function causeOf(err: unknown): string {
  if (err instanceof GrammyError) return `${err.error_code} ${err.description}`;
  if (err instanceof HttpError) return causeOf(err.error);
  return err instanceof Error ? err.message : String(err);
}

export function chatOf(update: Update): string | undefined {
  const chat = update.message?.chat ?? update.callback_query?.message?.chat;
  return chat ? String(chat.id) : undefined;
}
