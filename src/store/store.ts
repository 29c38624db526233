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

export function openStore(path: string): Store {
  const db = openDatabase(path);
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
      if (db.open) db.close();
    },
  };
}
