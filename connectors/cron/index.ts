import type { Cron } from "croner";
import type { RunOutcome } from "../../src/agent/types.js";
import type { Config } from "../../src/config/schema.js";
import type { Connector, ConnectorHealth, Core, DeliverOptions, FireResult, ScheduleInfo, Scheduler } from "../../src/connector.js";
import { errorMessage } from "../../src/errors.js";
import { sleep } from "../../src/net/sleep.js";
import type { ReminderRow } from "../../src/store/schedules.js";
import { describeTime, zonedCron } from "../../src/time.js";
import { approvalsTo, subsetTools, tellOwnerOnce } from "./scheduled.js";

type Job = Config["connectors"]["cron"]["jobs"][number];

const MINUTE = 60_000;
/** Why a firing was asked for by `hermes schedules run`. */
const RUN_NOW = "run now";

/**
 * Scheduled runs on croner (node-cron drops a 02:30 job on the spring-forward day; croner moves it to 03:00
 * and gives the previous/next runs that catch-up needs). Every firing is recorded with its slot, so a slot
 * never runs twice; a slot missed while hermes was down runs once on start within a grace window.
 */
export function createCronConnector(core: Core, initial: Config): Connector {
  const log = core.log.child({ connector: "cron" });
  let config = initial;
  let cfg = config.connectors.cron;
  const schedules = core.store.schedules;
  const jobs = new Map<string, { job: Job; cron: Cron }>();
  const reminders = new Map<number, Cron>();
  /** One-shot reminders being sent: not armed again meanwhile (a reminder added then re-reads the list). */
  const sending = new Set<number>();
  let unsubscribe: (() => void) | undefined;
  const stopping = new AbortController();
  const zoneOf = (job: Job) => job.timezone ?? config.timezone;
  /** This process's start: firings from before it were left by an earlier process. */
  const startedAt = Date.now() - performance.now();

  async function fireJob(job: Job, slotAt: number, why: string): Promise<FireResult> {
    const firing = schedules.claim(job.name, slotAt);
    if (firing === undefined) return { status: "skipped", error: "this slot already fired" };
    log.info({ job: job.name, slot: new Date(slotAt).toISOString(), why }, "job firing");
    let outcome: RunOutcome | undefined;
    for (let attempt = 0; attempt <= cfg.retries; attempt++) {
      if (attempt > 0) await sleep(cfg.retry_delay_s * 1000 * 2 ** (attempt - 1), stopping.signal);
      if (stopping.signal.aborted) break;
      const { runId, done } = core.submit({
        sessionKey: `cron:${job.name}`,
        text: job.prompt,
        source: "cron",
        channel: job.deliver,
        ...(job.tools ? { tools: await subsetTools(job.tools, core) } : {}),
        listener: approvalsTo(core, job.deliver),
      });
      schedules.setRun(firing, runId);
      outcome = await done;
      if (outcome.stopReason !== "model_error") break;
      log.warn({ job: job.name, attempt, reply: outcome.reply }, "job run failed; will retry");
    }
    return finishJob(job, firing, outcome, why === RUN_NOW);
  }

  async function finishJob(job: Job, firing: number, outcome: RunOutcome | undefined, byHand: boolean): Promise<FireResult> {
    if (stopping.signal.aborted && outcome?.stopReason !== "done") return { status: "error", error: "hermes stopped" };
    if (!outcome || outcome.stopReason === "model_error" || outcome.stopReason === "interrupted") {
      const error = outcome?.reply ?? "hermes stopped before the job ran";
      schedules.finish(firing, "error", { error });
      await tellOwnerOnce(core, log, `cron:${job.name}:told`, job.deliver, `The scheduled job "${job.name}" could not run: ${error}`);
      return { status: "error", error };
    }
    const sent = await deliverRetrying(job.deliver, outcome.reply, { job: job.name }, byHand);
    if ("messageId" in sent) {
      schedules.finish(firing, "ok", { messageId: sent.messageId });
      log.info({ job: job.name, deliver: job.deliver, messageId: sent.messageId }, "job delivered");
      core.store.inbound.setValue(`cron:${job.name}:told`, "");
      return { status: "ok", message_id: sent.messageId, reply: outcome.reply };
    }
    schedules.finish(firing, "delivery_failed", { error: sent.error });
    log.error({ job: job.name, err: sent.error }, "job ran but its reply could not be delivered");
    return { status: "delivery_failed", error: sent.error, reply: outcome.reply };
  }

  /**
   * Delivers `text`, trying again on a failure as a job's run is (`retries`, `retry_delay_s` doubling): a
   * Discord outage, a refusal from Telegram, a mail server restarting or a plugin's service down for a minute
   * no longer loses the reminder or the briefing. A stop during the waits ends it (`stopped`).
   */
  async function deliverRetrying(
    target: string,
    text: string,
    about: Record<string, unknown>,
    byHand: boolean,
    wanted: () => boolean = () => true,
    options?: DeliverOptions,
  ): Promise<{ messageId: string } | { error: string; stopped: boolean; cancelled?: true }> {
    let error = "hermes stopped before it was delivered";
    // `hermes schedules run` delivers once: the owner waiting at the terminal hears of a failure at once.
    const retries = byHand ? 0 : cfg.retries;
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await sleep(cfg.retry_delay_s * 1000 * 2 ** (attempt - 1), stopping.signal);
      if (stopping.signal.aborted) return { error, stopped: true };
      // A reminder cancelled while it waited to be tried again is not sent after all.
      if (attempt > 0 && !wanted()) return { error: "cancelled before it could be delivered", stopped: false, cancelled: true };
      try {
        return await core.deliver(target, text, options);
      } catch (err) {
        error = errorMessage(err);
        if (attempt < retries) log.warn({ ...about, deliver: target, attempt, err: error }, "delivery failed; will retry");
      }
    }
    return { error, stopped: false };
  }

  /**
   * When hermes first ran a job (kept across restarts): a slot before it is no slot the job missed. Set at
   * start and when a reload adds the job, so its first downtime is caught up too.
   */
  function firstSeen(job: Job): number {
    const key = `cron:${job.name}:since`;
    const since = Number(core.store.inbound.value(key) ?? 0);
    if (!since) core.store.inbound.setValue(key, String(Date.now()));
    return since;
  }

  /** At start: the latest slot missed while hermes was down runs once if it is recent enough, else it is recorded as missed. */
  function catchUp(job: Job): void {
    const since = firstSeen(job);
    if (!since) return;
    const slot = missedSlot(job.name, job.schedule, zoneOf(job), since);
    if (!slot) return;
    if (slot.late) {
      void fireJob(job, slot.at, "catch-up after downtime");
    } else {
      schedules.claim(job.name, slot.at, "missed");
      log.warn({ job: job.name, slot: new Date(slot.at).toISOString() }, "slot missed while hermes was down; recorded as missed");
    }
  }

  /**
   * The latest slot of `pattern` before now that has not fired, at or after `since`: `late` when it is recent
   * enough to run now (within `grace_s`, else half the time to the next slot, from 2 minutes up to 2 hours).
   */
  function missedSlot(name: string, pattern: string, zone: string, since: number): { at: number; late: boolean } | undefined {
    const now = Date.now();
    const probe = zonedCron(pattern, zone, { paused: true });
    const previous = probe.previousRuns(1, new Date(now))[0];
    if (!previous) return undefined;
    const at = previous.getTime();
    const last = schedules.lastSlot(name);
    if (at < since || (last !== undefined && at <= last)) return undefined;
    const next = probe.nextRun(previous)?.getTime() ?? at + 2 * 3_600_000;
    const grace = cfg.grace_s !== undefined ? cfg.grace_s * 1000 : Math.min(120 * MINUTE, Math.max(2 * MINUTE, (next - at) / 2));
    return { at, late: now - at <= grace };
  }

  /**
   * Sends reminder `r` for its slot `slotAt`. `late`: after a downtime, saying so; a firing of that slot an
   * earlier process left interrupted (killed, or stopped, before the reminder went out) is taken up again.
   * `byHand`: `hermes schedules run`, delivered once. A one-shot retires once its firing has settled,
   * delivered or failed for good: one whose hermes stopped (or died) before it was out stays, and the next
   * start sends it.
   */
  async function fireReminder(r: ReminderRow, slotAt: number, o: { late?: boolean; byHand?: boolean } = {}): Promise<FireResult> {
    const key = `remind:${r.id}`;
    const firing = schedules.claim(key, slotAt) ?? (o.late ? schedules.retake(key, slotAt) : undefined);
    if (firing === undefined) return { status: "skipped", error: "this slot already fired" };
    if (!r.cron) {
      // Its timer goes now (run by hand before its time, it would fire again then).
      reminders.get(r.id)?.stop();
      reminders.delete(r.id);
      sending.add(r.id);
    }
    const note = o.late ? ` (due ${describeTime(new Date(slotAt), r.timezone, new Date())}; hermes was not running then)` : "";
    const stillWanted = () => !schedules.reminder(r.id)?.cancelled_at;
    const sent = await deliverRetrying(r.channel, `⏰ Reminder: ${r.text}${note}`, { reminder: r.id }, o.byHand === true, stillWanted, {
      own: true,
    });
    sending.delete(r.id);
    const settled = "messageId" in sent || !sent.stopped;
    if (settled && !r.cron) schedules.retire(r.id);
    if ("messageId" in sent) {
      schedules.finish(firing, "ok", { messageId: sent.messageId });
      log.info({ reminder: r.id, channel: r.channel, messageId: sent.messageId }, "reminder delivered");
      return { status: "ok", message_id: sent.messageId };
    }
    if (sent.stopped) {
      schedules.finish(firing, "interrupted", { error: sent.error });
      log.warn({ reminder: r.id, err: sent.error }, "reminder not delivered before the stop; the next start sends it");
      return { status: "error", error: sent.error };
    }
    if (sent.cancelled) {
      schedules.finish(firing, "cancelled", { error: sent.error });
      log.info({ reminder: r.id }, "reminder cancelled while its delivery waited to be tried again; not sent");
      return { status: "skipped", error: sent.error };
    }
    schedules.finish(firing, "delivery_failed", { error: sent.error });
    log.error({ reminder: r.id, err: sent.error }, "reminder could not be delivered");
    return { status: "delivery_failed", error: sent.error };
  }

  /** The slot of `key` an earlier process left interrupted (the reminder not sent), if its newest and within `grace` ms. */
  function interruptedSlot(key: string, grace: number): number | undefined {
    const last = schedules.last(key);
    return last?.status === "interrupted" && Date.now() - last.slot_at <= grace ? last.slot_at : undefined;
  }

  /**
   * Arms the active reminders not armed yet. `moved`: repeating ones a reload just moved to another zone,
   * whose time in the new zone may have passed while hermes ran in the old one: not sent late as if
   * hermes had been down, only recorded as missed (so a restart does not send it either).
   */
  function armReminders(moved: ReadonlySet<number> = new Set()): void {
    const active = new Map(schedules.activeReminders().map((r) => [r.id, r]));
    for (const [id, cron] of reminders) {
      if (!active.has(id)) {
        cron.stop();
        reminders.delete(id);
      }
    }
    const now = Date.now();
    const grace = cfg.grace_s !== undefined ? cfg.grace_s * 1000 : 120 * MINUTE;
    for (const r of active.values()) {
      if (reminders.has(r.id) || sending.has(r.id)) continue;
      if (r.at !== null && r.at <= now) {
        if (now - r.at <= grace) void fireReminder(r, r.at, { late: true });
        else {
          schedules.claim(`remind:${r.id}`, r.at, "missed");
          schedules.retire(r.id);
        }
        continue;
      }
      // A repeating one whose latest time passed while hermes was down: sent late, or recorded as missed;
      // else one whose latest time came but whose hermes stopped (or died) before it was out: sent late.
      const missed = r.cron ? missedSlot(`remind:${r.id}`, r.cron, r.timezone, r.created_at) : undefined;
      const interrupted = r.cron && !missed ? interruptedSlot(`remind:${r.id}`, grace) : undefined;
      if (missed?.late && !moved.has(r.id)) void fireReminder(r, missed.at, { late: true });
      else if (missed) schedules.claim(`remind:${r.id}`, missed.at, "missed");
      else if (interrupted !== undefined) void fireReminder(r, interrupted, { late: true });
      const pattern = r.cron ?? new Date(r.at ?? now);
      const cron = zonedCron(pattern, r.timezone, { protect: true, catch: onError }, (self: Cron) => {
        // A one-shot's slot is its time as stored, the one a start after a stop looks for.
        void fireReminder(r, r.at ?? slotOf(self));
      });
      reminders.set(r.id, cron);
    }
  }

  const onError = (err: unknown) => log.error({ err }, "scheduled callback failed");
  const slotOf = (self: Cron) => Math.floor((self.currentRun()?.getTime() ?? Date.now()) / 1000) * 1000;

  function armJob(job: Job): void {
    const cron = zonedCron(job.schedule, zoneOf(job), { protect: true, catch: onError, name: job.name }, (self: Cron) => {
      void fireJob(job, slotOf(self), "schedule");
    });
    jobs.set(job.name, { job, cron });
  }

  /** Jobs as the reloaded config has them: removed and changed ones stop, new and changed ones are armed. */
  function reloadJobs(next: Config): void {
    const zoneChanged = next.timezone !== config.timezone;
    config = next;
    cfg = next.connectors.cron;
    const wanted = new Map(cfg.jobs.filter((j) => j.enabled).map((j) => [j.name, j]));
    for (const [name, { job, cron }] of jobs) {
      const kept = wanted.get(name);
      if (kept && !zoneChanged && JSON.stringify(kept) === JSON.stringify(job)) continue;
      cron.stop();
      jobs.delete(name);
    }
    for (const job of wanted.values()) {
      if (jobs.has(job.name)) continue;
      armJob(job);
      firstSeen(job);
    }
    log.info({ jobs: [...jobs.keys()] }, "cron jobs reloaded");
    if (!zoneChanged) return;
    const moved = new Set(followZone());
    for (const id of moved) {
      reminders.get(id)?.stop();
      reminders.delete(id);
    }
    armReminders(moved);
  }

  /**
   * Repeating reminders keep the owner's time of day in the configured `timezone` (a reminder takes the
   * zone it was made in, and the remind tool only knows that one): after a move, "every day at 9" is at 9
   * in the new zone, as the jobs are. One-shot reminders keep their instant, which was said back in words.
   */
  function followZone(): number[] {
    const moved = schedules.rezoneRepeating(config.timezone);
    if (moved.length > 0) log.info({ reminders: moved, timezone: config.timezone }, "repeating reminders moved to the configured timezone");
    return moved;
  }

  const scheduler: Scheduler = {
    list(): ScheduleInfo[] {
      schedules.settleResumed(startedAt);
      const now = new Date();
      const jobInfos = [...jobs.values()].map(({ job, cron }) =>
        info(job.name, "job", job.schedule, zoneOf(job), job.deliver, cron.nextRun(), now),
      );
      const reminderInfos = schedules.activeReminders().map((r) => {
        const next = r.cron ? zonedCron(r.cron, r.timezone, { paused: true }).nextRun() : new Date(r.at ?? 0);
        return info(`remind:${r.id}`, "reminder", r.cron ?? new Date(r.at ?? 0).toISOString(), r.timezone, r.channel, next, now, r.text);
      });
      return [...jobInfos, ...reminderInfos];
    },
    async runNow(name) {
      const job = jobs.get(name)?.job ?? cfg.jobs.find((j) => j.name === name);
      if (job) return fireJob(job, Date.now(), RUN_NOW);
      const reminder = schedules.activeReminders().find((r) => `remind:${r.id}` === name);
      if (reminder) return fireReminder(reminder, Date.now(), { byHand: true });
      return { status: "unknown", error: `no job or reminder named ${name}` };
    },
  };

  function info(
    name: string,
    kind: ScheduleInfo["kind"],
    schedule: string,
    zone: string,
    deliver: string,
    next: Date | null,
    now: Date,
    text?: string,
  ): ScheduleInfo {
    const last = schedules.last(name);
    return {
      name: text ? `${name} "${text}"` : name,
      kind,
      schedule,
      timezone: zone,
      deliver,
      next: next ? next.toISOString() : null,
      next_local: next ? describeTime(next, zone, now) : "never",
      last_status: last?.status ?? null,
      last_slot: last ? new Date(last.slot_at).toISOString() : null,
    };
  }

  return {
    name: "cron",
    scheduler,
    async start() {
      const left = schedules.interruptRunning(startedAt);
      if (left)
        log.warn({ firings: left }, "scheduled runs a stopped hermes left unfinished are settled (interrupted, or ok if resumed and done)");
      for (const job of cfg.jobs.filter((j) => j.enabled)) {
        armJob(job);
        catchUp(job);
      }
      followZone();
      armReminders();
      unsubscribe = schedules.onChange(() => armReminders());
    },
    async stop() {
      stopping.abort();
      unsubscribe?.();
      for (const { cron } of jobs.values()) cron.stop();
      for (const cron of reminders.values()) cron.stop();
    },
    reload: reloadJobs,
    health(): ConnectorHealth {
      return { ok: true, detail: `${jobs.size} job(s), ${reminders.size} reminder(s)` };
    },
  };
}
