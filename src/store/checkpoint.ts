import { statSync } from "node:fs";
import type { Db } from "./db.js";

/** The WAL is checkpointed however busy the daemon is once it holds this much (and the file is cut back to it). */
export const WAL_LIMIT_BYTES = 64 * 1024 * 1024;

export type CheckpointLook = "empty" | "busy" | "checkpointed" | "partial" | "failed";

/**
 * Decides when the WAL is copied into the database file. A checkpoint of a busy ten seconds (~9,000
 * pages) holds the one JavaScript thread for 100–150 ms, mostly in fsync, and every chat waiting on
 * the model waits that much longer; so it waits for a quiet moment: a look at which nothing was
 * written since the previous look. A WAL past WAL_LIMIT_BYTES is checkpointed anyway.
 *
 * The checkpoint never waits for a lock (a reader in another process, a backup): it copies what it can
 * and the next look tries again. After a complete one the WAL is truncated, so its size on disk is
 * what was written since.
 */
export class WalCheckpointer {
  private readonly changes: () => number;
  private seen: number;
  private empty = false;

  constructor(
    private readonly db: Db,
    private readonly walPath: string,
    private readonly limitBytes = WAL_LIMIT_BYTES,
  ) {
    const totalChanges = db.prepare("SELECT total_changes()").pluck();
    this.changes = () => totalChanges.get() as number;
    this.seen = this.changes();
  }

  /** One look; the daemon takes one a second. */
  look(): CheckpointLook {
    const changes = this.changes();
    const quiet = changes === this.seen;
    this.seen = changes;
    // Nothing written since the WAL was last found empty: no need to look at the file again.
    if (quiet && this.empty) return "empty";
    let bytes: number;
    try {
      bytes = statSync(this.walPath, { throwIfNoEntry: false })?.size ?? 0;
    } catch {
      return "failed";
    }
    this.empty = bytes === 0;
    if (this.empty) return "empty";
    if (!quiet && bytes < this.limitBytes) return "busy";
    const result = this.checkpoint();
    this.empty = result === "checkpointed";
    return result;
  }

  private checkpoint(): CheckpointLook {
    const busyTimeout = this.db.pragma("busy_timeout", { simple: true }) as number;
    this.db.pragma("busy_timeout = 0");
    try {
      const [result] = this.db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number; log: number; checkpointed: number }[];
      return result?.busy ? "partial" : "checkpointed";
    } catch {
      // A full disk or an I/O error: every committed row is still in the WAL; the next look tries again.
      return "failed";
    } finally {
      this.db.pragma(`busy_timeout = ${busyTimeout}`);
    }
  }
}
