import { ApprovalStore } from "./approvals.js";
import { AuditStore } from "./audit.js";
import { WAL_LIMIT_BYTES, WalCheckpointer } from "./checkpoint.js";
import { type Db, openDatabase } from "./db.js";
import { HistoryStore } from "./history.js";
import { InboundStore } from "./inbound.js";
import { MemoryStore } from "./memory.js";
import { NotesStore } from "./notes.js";
import { RecallStore } from "./recall.js";
import { ScheduleStore } from "./schedules.js";
import { SummaryStore } from "./summaries.js";
import { UsageStore } from "./usage.js";

const CHECKPOINT_LOOK_MS = 1000;

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
  usage: UsageStore;
  summaries: SummaryStore;
  recall: RecallStore;
  close(): void;
}

export function openStore(path: string, options: { busyTimeoutMs?: number } = {}): Store {
  const db = openDatabase(path, options);
  // Checkpoints happen in quiet moments (see WalCheckpointer), not inside some user's commit.
  db.pragma("wal_autocheckpoint = 0");
  db.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
  const checkpointer = new WalCheckpointer(db, `${path}-wal`);
  const checkpoints = setInterval(() => {
    if (db.open) checkpointer.look();
  }, CHECKPOINT_LOOK_MS);
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
    usage: new UsageStore(db),
    summaries: new SummaryStore(db),
    recall: new RecallStore(db),
    close: () => {
      clearInterval(checkpoints);
      if (db.open) {
        db.pragma("wal_checkpoint(TRUNCATE)");
        db.close();
      }
    },
  };
}
