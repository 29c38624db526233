import { ApprovalStore } from "./approvals.js";
import { AuditStore } from "./audit.js";
import { type Db, openDatabase } from "./db.js";
import { HistoryStore } from "./history.js";
import { InboundStore } from "./inbound.js";
import { MemoryStore } from "./memory.js";
import { NotesStore } from "./notes.js";
import { ScheduleStore } from "./schedules.js";

/** The daemon's one database, split by concern. */
export interface Store {
  db: Db;
  history: HistoryStore;
  audit: AuditStore;
  notes: NotesStore;
  approvals: ApprovalStore;
  memory: MemoryStore;
  inbound: InboundStore;
  schedules: ScheduleStore;
  close(): void;
}

export function openStore(path: string, options: { busyTimeoutMs?: number } = {}): Store {
  const db = openDatabase(path, options);
  // Checkpoint the WAL on a timer, off the path of a user's message, instead of inside some commit.
  db.pragma("wal_autocheckpoint = 0");
  db.pragma("journal_size_limit = 67108864");
  const checkpoints = setInterval(() => {
    try {
      if (db.open) db.pragma("wal_checkpoint(PASSIVE)");
    } catch {
      // A full disk or an I/O error: every committed row is still in the WAL; the next tick tries again.
    }
  }, 10_000);
  checkpoints.unref();
  return {
    db,
    history: new HistoryStore(db),
    audit: new AuditStore(db),
    notes: new NotesStore(db),
    approvals: new ApprovalStore(db),
    memory: new MemoryStore(db),
    inbound: new InboundStore(db),
    schedules: new ScheduleStore(db),
    close: () => {
      clearInterval(checkpoints);
      if (db.open) {
        db.pragma("wal_checkpoint(TRUNCATE)");
        db.close();
      }
    },
  };
}
