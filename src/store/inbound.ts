import type { Db } from "./db.js";
import { statements } from "./statements.js";

/**
 * Updates received from chat networks, recorded before they are acknowledged, so a restart neither
 * processes one twice nor loses one. Plus a small key-value table for offsets and rate limits.
 * An update's payload is kept only until it is handled (a restart replays what is left): then its id
 * alone keeps a replay from running twice. Strangers' messages are not kept, nor a copy of the owner's.
 */
export class InboundStore {
  private readonly q;

  constructor(private readonly db: Db) {
    this.q = statements(db, {
      insert: () =>
        db.prepare(
          "INSERT OR IGNORE INTO inbound_updates (connector, update_id, chat, payload, status, received_at) VALUES (?, ?, ?, ?, 'received', ?)",
        ),
      done: () =>
        db.prepare(
          "UPDATE inbound_updates SET status = 'done', payload = '{}', run_id = COALESCE(?, run_id) WHERE connector = ? AND update_id = ?",
        ),
      unfinished: () =>
        db.prepare("SELECT payload FROM inbound_updates WHERE connector = ? AND status = 'received' ORDER BY update_id").pluck(),
      runOf: () => db.prepare("SELECT run_id FROM inbound_updates WHERE connector = ? AND update_id = ?").pluck(),
      get: () => db.prepare("SELECT value FROM kv WHERE key = ?").pluck(),
      remove: () => db.prepare("DELETE FROM kv WHERE key = ?"),
      removeOlder: () => db.prepare("DELETE FROM kv WHERE key >= ? AND key < ? AND updated_at < ?"),
      set: () =>
        db.prepare(
          "INSERT INTO kv (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        ),
    });
  }

  /**
   * Records a batch and the next offset in one transaction; returns only the updates not seen before.
   * Call before the offset is sent to the network (which acknowledges the batch).
   */
  recordBatch<T extends { update_id: number }>(connector: string, updates: T[], chatOf: (u: T) => string | undefined): T[] {
    return this.db.transaction(() => {
      const fresh = updates.filter(
        (u) => this.q.insert.run(connector, u.update_id, chatOf(u) ?? null, JSON.stringify(u), Date.now()).changes > 0,
      );
      // The batch's own highest id, even below the offset asked with: after a week without updates Telegram
      // numbers the next one at random, maybe lower, and an offset kept above it would confirm nothing new
      // (the same update served again at once, in a loop, until 100 of them shut new messages out).
      const max = Math.max(...updates.map((u) => u.update_id));
      if (updates.length) this.setValue(`${connector}:offset`, String(max + 1));
      return fresh;
    })();
  }

  /**
   * Records one event that has no offset to acknowledge (a Discord message, keyed by its snowflake).
   * Returns false when it was seen before: a gateway replay after a resume is not processed twice.
   */
  recordOne(connector: string, id: bigint, chat: string, payload: unknown): boolean {
    return this.q.insert.run(connector, id, chat, JSON.stringify(payload), Date.now()).changes > 0;
  }

  /**
   * A webhook delivery by its sender's id (GitHub's X-GitHub-Delivery), recorded with the run it started.
   * Returns the run of an earlier delivery with the same id instead, while that run is `live` (recorded, or
   * still to start): a replayed delivery runs once. A delivery whose run never started (a rate-limited call
   * dropped by a stop) starts one when it is delivered again, and is recorded with that run.
   */
  recordDelivery(
    connector: string,
    deliveryId: string,
    startRun: () => string,
    live: (runId: string) => boolean,
  ): { runId: string; duplicate: boolean } {
    const earlier = this.q.runOf.get(connector, deliveryId) as string | null | undefined;
    if (earlier && live(earlier)) return { runId: earlier, duplicate: true };
    const runId = startRun();
    this.q.insert.run(connector, deliveryId, null, "{}", Date.now());
    this.markDone(connector, deliveryId, runId);
    return { runId, duplicate: false };
  }

  markDone(connector: string, updateId: number | bigint | string, runId?: string): void {
    this.q.done.run(runId ?? null, connector, updateId);
  }

  /** Updates recorded but not handed to the agent (the process died in between), oldest first. */
  unfinished<T>(connector: string): T[] {
    return (this.q.unfinished.all(connector) as string[]).map((p) => JSON.parse(p) as T);
  }

  offset(connector: string): number {
    return Number(this.value(`${connector}:offset`) ?? 0);
  }

  value(key: string): string | undefined {
    return (this.q.get.get(key) as string | undefined) ?? undefined;
  }

  setValue(key: string, value: string): void {
    this.q.set.run(key, value, Date.now());
  }

  removeValue(key: string): void {
    this.q.remove.run(key);
  }

  /** Removes the values whose key starts with `prefix` that were last set before `before` (ms): ended logins, say. */
  removeValuesSetBefore(prefix: string, before: number): number {
    // A range on the key (its primary key) rather than LIKE, whose _ and % a prefix may hold.
    return this.q.removeOlder.run(prefix, `${prefix}\uffff`, before).changes;
  }
}
