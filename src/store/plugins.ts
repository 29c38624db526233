import type { Db } from "./db.js";
import { statements } from "./statements.js";

/**
 * What connector plugins keep: the ids of the messages each has handed over (so a redelivery runs
 * nothing) and small values such as stream cursors. Prepared only when a plugin is configured.
 */
export class PluginStore {
  private readonly q;

  constructor(private readonly db: Db) {
    this.q = statements(db, {
      remember: () => db.prepare("INSERT OR IGNORE INTO plugin_inbound (connector, message_id, received_at) VALUES (?, ?, ?)"),
      get: () => db.prepare("SELECT value FROM plugin_state WHERE connector = ? AND key = ?").pluck(),
      set: () =>
        db.prepare(
          "INSERT INTO plugin_state (connector, key, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(connector, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        ),
    });
  }

  /** Records a message id; false when it was recorded before. */
  remember(connector: string, messageId: string): boolean {
    return this.q.remember.run(connector, messageId, Date.now()).changes > 0;
  }

  /** Runs `work` in one transaction with the record of `messageId`: both are kept, or neither is. */
  once<T>(connector: string, messageId: string, work: () => T): { fresh: true; value: T } | { fresh: false } {
    return this.db.transaction(() =>
      this.remember(connector, messageId) ? { fresh: true as const, value: work() } : { fresh: false as const },
    )();
  }

  value(connector: string, key: string): string | undefined {
    return (this.q.get.get(connector, key) as string | undefined) ?? undefined;
  }

  setValue(connector: string, key: string, value: string): void {
    this.q.set.run(connector, key, value, Date.now());
  }
}
