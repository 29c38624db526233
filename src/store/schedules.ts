import type { Db } from "./db.js";
import { statements } from "./statements.js";

export type FiringStatus = "running" | "ok" | "error" | "delivery_failed" | "missed" | "interrupted" | "cancelled";

export interface FiringRow {
  id: number;
  job: string;
  slot_at: number;
  fired_at: number;
  run_id: string | null;
  status: FiringStatus;
  message_id: string | null;
  error: string | null;
}

export interface ReminderRow {
  id: number;
  channel: string;
  text: string;
  at: number | null;
  cron: string | null;
  timezone: string;
  created_at: number;
  cancelled_at: number | null;
  done_at: number | null;
}

/** Firings of scheduled jobs (the evidence of what ran and what was delivered) and reminders. */
export class ScheduleStore {
  private readonly q;
  private readonly listeners = new Set<() => void>();

  constructor(db: Db) {
    this.q = statements(db, {
      claim: () => db.prepare("INSERT OR IGNORE INTO firings (job, slot_at, fired_at, status) VALUES (?, ?, ?, ?) RETURNING id"),
      finish: () => db.prepare("UPDATE firings SET status = ?, run_id = COALESCE(?, run_id), message_id = ?, error = ? WHERE id = ?"),
      setRun: () => db.prepare("UPDATE firings SET run_id = ? WHERE id = ?"),
      retake: () =>
        db.prepare(
          "UPDATE firings SET status = 'running', fired_at = ?, error = NULL WHERE job = ? AND slot_at = ? AND status = 'interrupted' RETURNING id",
        ),
      // A firing's run may have been resumed at start (running, or waiting for its approval): that one is left.
      // One whose run has ended done with its reply sent (through the run's chat, after a resume) went out.
      settleLeftRunning: () =>
        db.prepare(`UPDATE firings SET
             status = CASE WHEN (SELECT status = 'done' AND reply_sent_at IS NOT NULL FROM runs WHERE id = firings.run_id) THEN 'ok' ELSE 'interrupted' END,
             error = CASE WHEN (SELECT status = 'done' AND reply_sent_at IS NOT NULL FROM runs WHERE id = firings.run_id) THEN NULL ELSE ? END
           WHERE status = 'running' AND fired_at < ?
             AND COALESCE((SELECT status FROM runs WHERE id = firings.run_id), '') NOT IN ('queued', 'running', 'suspended')`),
      // One left running by an earlier process whose run was resumed and has ended, its outcome sent.
      settleResumed: () =>
        db.prepare(`UPDATE firings SET
             status = CASE WHEN (SELECT status FROM runs WHERE id = firings.run_id) = 'done' THEN 'ok' ELSE 'interrupted' END,
             error = CASE WHEN (SELECT status FROM runs WHERE id = firings.run_id) = 'done' THEN NULL ELSE ? END
           WHERE status = 'running' AND fired_at < ?
             AND EXISTS (SELECT 1 FROM runs WHERE id = firings.run_id AND reply_sent_at IS NOT NULL
                           AND status NOT IN ('queued', 'running', 'suspended'))`),
      lastSlot: () => db.prepare("SELECT MAX(slot_at) FROM firings WHERE job = ?").pluck(),
      last: () => db.prepare("SELECT * FROM firings WHERE job = ? ORDER BY slot_at DESC LIMIT 1"),
      firings: () => db.prepare("SELECT * FROM firings WHERE job = ? ORDER BY slot_at"),
      addReminder: () =>
        db.prepare("INSERT INTO reminders (channel, text, at, cron, timezone, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *"),
      activeReminders: () => db.prepare("SELECT * FROM reminders WHERE cancelled_at IS NULL AND done_at IS NULL ORDER BY id"),
      reminder: () => db.prepare("SELECT * FROM reminders WHERE id = ?"),
      cancel: () => db.prepare("UPDATE reminders SET cancelled_at = ? WHERE id = ? AND cancelled_at IS NULL AND done_at IS NULL"),
      retire: () => db.prepare("UPDATE reminders SET done_at = ? WHERE id = ?"),
      rezone: () =>
        db.prepare(
          "UPDATE reminders SET timezone = ? WHERE cron IS NOT NULL AND cancelled_at IS NULL AND done_at IS NULL AND timezone != ? RETURNING id",
        ),
    });
  }

  /** Records a firing for (job, slot) unless one exists: a slot never runs twice. Returns its id, or undefined. */
  claim(job: string, slotAt: number, status: FiringStatus = "running"): number | undefined {
    return (this.q.claim.get(job, slotAt, Date.now(), status) as { id: number } | undefined)?.id;
  }

  /** Takes up again the firing of (job, slot) an earlier process left interrupted; its id, or undefined when there is none. */
  retake(job: string, slotAt: number): number | undefined {
    return (this.q.retake.get(Date.now(), job, slotAt) as { id: number } | undefined)?.id;
  }

  /**
   * Firings a process that is gone left running (it was killed, or the machine lost power): marked
   * interrupted instead of showing as running for good, or ok when their run was resumed and has ended
   * done with its reply sent. Those whose run is live again (resumed, or waiting for an approval) are left. Returns how many.
   */
  interruptRunning(before: number): number {
    return this.q.settleLeftRunning.run("hermes stopped before it ended", before).changes;
  }

  /**
   * Settles the firings left running by a process that started before `before` whose runs this process
   * resumed (after a restart, or when their approval was decided) and has since ended, their reply sent:
   * ok when the run was done, else interrupted. Returns how many.
   */
  settleResumed(before: number): number {
    return this.q.settleResumed.run("its run did not finish", before).changes;
  }

  setRun(id: number, runId: string): void {
    this.q.setRun.run(runId, id);
  }

  finish(id: number, status: FiringStatus, o: { runId?: string; messageId?: string; error?: string } = {}): void {
    this.q.finish.run(status, o.runId ?? null, o.messageId ?? null, o.error ?? null, id);
  }

  lastSlot(job: string): number | undefined {
    return (this.q.lastSlot.get(job) as number | null) ?? undefined;
  }

  last(job: string): FiringRow | undefined {
    return this.q.last.get(job) as FiringRow | undefined;
  }

  firings(job: string): FiringRow[] {
    return this.q.firings.all(job) as FiringRow[];
  }

  addReminder(r: { channel: string; text: string; at?: number; cron?: string; timezone: string }): ReminderRow {
    const row = this.q.addReminder.get(r.channel, r.text, r.at ?? null, r.cron ?? null, r.timezone, Date.now()) as ReminderRow;
    this.changed();
    return row;
  }

  activeReminders(): ReminderRow[] {
    return this.q.activeReminders.all() as ReminderRow[];
  }

  reminder(id: number): ReminderRow | undefined {
    return this.q.reminder.get(id) as ReminderRow | undefined;
  }

  cancel(id: number): boolean {
    const changed = this.q.cancel.run(Date.now(), id).changes > 0;
    if (changed) this.changed();
    return changed;
  }

  retire(id: number): void {
    this.q.retire.run(Date.now(), id);
  }

  /** Moves the active repeating reminders of another zone to `zone`; returns their ids. */
  rezoneRepeating(zone: string): number[] {
    return (this.q.rezone.all(zone, zone) as { id: number }[]).map((r) => r.id);
  }

  /** Called when reminders change, so the scheduler can (re)arm them. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}
