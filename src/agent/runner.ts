import { DiskFullError, isDiskFull, ShutdownAbort, StoppingError } from "../errors.js";
import { newRunId } from "../run-id.js";
import { isEphemeralKey, type SessionRow } from "../store/history.js";
import { defaultSender, senderOf } from "../store/memory.js";
import { Turns } from "../turns.js";
import { compactNow } from "./compaction.js";
import { announceEnd, driveLive, type Live, type RunnerDeps } from "./live.js";
import { workAfterReply } from "./loop.js";
import { abandonEphemeral, sendOwedReplies } from "./restart.js";
import type { AgentEvent, EventListener, RunOutcome, SubmitRequest } from "./types.js";

interface Lane {
  tail: Promise<unknown>;
  waiting: number;
  current?: Live;
}

/** Serializes runs per session, runs sessions concurrently, and resumes runs when approvals are decided. */
export class Runner {
  private readonly lanes = new Map<string, Lane>();
  private readonly live = new Map<string, Live>();
  /** Runs submitted and not ended, started or still queued behind another run of their session. */
  private readonly submitted = new Map<string, Live>();
  private accepting = true;
  /** The shutdown has let its runs finish (or given up on them): stopping a run does nothing from here. */
  private closed = false;
  private readonly idleWaiters: (() => void)[] = [];
  /** A burst of runs starts one per pass of the event loop, so it does not hold up model answers. */
  private readonly starts = new Turns();
  /** Runs that ended before the owed replies were sent (new ones, submitted while connectors started): their send may be in flight. */
  private endedAtStart: Set<string> | undefined = new Set();

  /** Recovered runs wait for this: their events need the connectors, which start after recovery. */
  private readonly connectorsUp: Promise<void>;
  private markConnectorsUp!: () => void;

  constructor(private readonly deps: RunnerDeps) {
    this.connectorsUp = new Promise((resolve) => {
      this.markConnectorsUp = resolve;
    });
    deps.approvals.onDecided((event, approval) => {
      const live = this.live.get(event.runId);
      if (live) this.emit(live, event);
      else this.deps.fallbackListener(approval.channel)?.(event);
    });
  }

  submit(req: SubmitRequest): { runId: string; done: Promise<RunOutcome> } {
    const runId = req.runId ?? newRunId();
    if (!this.accepting) {
      if (req.recordedOrThrow) throw new StoppingError();
      const reply = "hermes is shutting down; send the message again in a moment.";
      return { runId, done: Promise.resolve({ runId, reply, stopReason: "interrupted" }) };
    }
    const channel = req.channel ?? req.sessionKey;
    const { history } = this.deps.store;
    // Recorded before anything is acknowledged: a queued message survives a crash and runs after the restart.
    // The time goes at the end of the message and stays there, so every earlier request is a
    // byte-identical prefix of the next one and the model server's prompt cache is reused.
    const sender = req.sender ?? defaultSender(req.source);
    const input = `${req.group ? `${sender.name}: ` : ""}${req.text}\n\n(${this.deps.timeNote()})`;
    let session: SessionRow;
    try {
      session = this.deps.store.db.transaction(() => {
        const s = req.context ? history.ephemeralSession(req.sessionKey, req.context) : history.activeSession(req.sessionKey);
        history.createRun(runId, s.id, req.source, { tools: req.tools, input, channel, sender, images: req.images, replyTo: req.replyTo });
        if (req.inbound) this.deps.store.inbound.markDone(req.inbound.connector, req.inbound.id, runId);
        return s;
      })();
    } catch (err) {
      if (!isDiskFull(err)) throw err;
      this.deps.log.error({ err, session: req.sessionKey }, "the disk is full: a message could not be recorded");
      throw new DiskFullError();
    }
    const live: Live = {
      runId,
      sessionKey: req.sessionKey,
      channel,
      tools: req.tools,
      controller: new AbortController(),
      listener: req.listener,
      sender,
      ...(req.group && { group: true }),
    };
    const done = this.enqueue(req.sessionKey, live, () => this.startQueued(live, session.id, req.source));
    return { runId, done };
  }

  /** A queued run's turn has come: its message joins the history, then the loop drives it. */
  private startQueued(live: Live, sessionId: number, source: string): Promise<RunOutcome> {
    const { history } = this.deps.store;
    const run = history.run(live.runId);
    this.deps.store.db.transaction(() => {
      history.startRun(live.runId);
      const imageFiles = run?.images ? (JSON.parse(run.images) as string[]) : undefined;
      history.appendMessage(sessionId, live.runId, { role: "user", content: run?.input ?? "", ...(imageFiles && { imageFiles }) });
    })();
    this.emit(live, { type: "run_start", runId: live.runId, session: live.sessionKey, source });
    return this.drive(live, sessionId);
  }

  /**
   * Aborts one run: the current one of its session (also one waiting for approval), or one still queued,
   * which ends at once: its message is not added to the session, and its turn starts nothing. False when it has ended or is unknown, and once a shutdown
   * has let its runs finish (`closed`): what it leaves (a run waiting for approval, a queued one) is the
   * next start's to resume, and a connector's own stop (the HTTP door closing its clients' connections)
   * must not end it, nor touch the store, which closes right after the connectors. During the grace period
   * before that, a /stop still stops.
   */
  stopRun(runId: string): boolean {
    const live = this.submitted.get(runId);
    if (!live || this.closed) return false;
    live.controller.abort(new Error("stopped by the user"));
    this.deps.approvals.denyRun(runId, "stop");
    if (!this.live.has(runId)) live.endQueued?.();
    return true;
  }

  /** Aborts the session's current run (also one waiting for approval). Returns false when nothing ran. */
  stop(sessionKey: string): boolean {
    const current = this.lanes.get(sessionKey)?.current;
    if (!current || this.closed) return false;
    current.controller.abort(new Error("stopped by the user"));
    this.deps.approvals.denyRun(current.runId, "stop");
    return true;
  }

  /** `/compact`: summarises the session's turns but the newest into its running summary now. */
  compact(sessionKey: string): Promise<{ ok: boolean; message: string }> {
    const session = this.deps.store.history.activeSession(sessionKey);
    return compactNow({ sessionId: session.id, sessionKey, signal: new AbortController().signal }, this.deps);
  }

  newSession(sessionKey: string): number {
    return this.deps.store.history.newSession(sessionKey).id;
  }

  /**
   * On start-up, in the order they arrived: queued runs start, suspended runs wait again for their
   * approvals, and runs that were working when the process died are resumed once more (the call that was
   * executing is reported to the model as interrupted); a run that already failed to finish twice is
   * ended and the user told. Approval timers are re-armed.
   */
  recover(): void {
    const { history, audit } = this.deps.store;
    const { approvals } = this.deps;
    audit.interruptRunning();
    for (const run of history.unfinishedRuns()) {
      const session = history.session(run.session_id);
      if (!session) continue;
      if (isEphemeralKey(session.key) && abandonEphemeral(this.deps.store, approvals, run, this.deps.config().storage.path)) continue;
      const channel = run.channel ?? session.key;
      let renderer: EventListener | undefined;
      const sender = senderOf(run);
      const live: Live = {
        runId: run.id,
        sessionKey: session.key,
        channel,
        tools: run.tools ? (JSON.parse(run.tools) as string[]) : undefined,
        controller: new AbortController(),
        sender,
        // A group run's message starts with its sender's name (see submit): it is resumed as one.
        ...(sender && run.input?.startsWith(`${sender.name}: `) && { group: true }),
        // Resolved at the first event (connectors start after recovery), then kept: one renderer per run.
        listener: (event) => {
          renderer ??= this.deps.fallbackListener(channel, run.reply_to ?? undefined);
          renderer?.(event);
        },
      };
      if (run.status === "queued") {
        void this.enqueue(session.key, live, () => this.connectorsUp.then(() => this.startQueued(live, session.id, run.source)));
        continue;
      }
      if (run.status === "running" && approvals.pendingCount(run.id) > 0) history.setRunStatus(run.id, "suspended");
      else if (run.status === "running" && run.attempts >= 2) {
        const asked = (run.input ?? "").split("\n")[0]?.slice(0, 80) ?? "";
        const reply = `hermes restarted twice while working on “${asked}” and gave up; please ask again.`;
        history.endRun(run.id, "interrupted", "interrupted", reply); // sent with the owed replies
        continue;
      } else if (run.status === "running") {
        this.deps.log.warn({ runId: run.id, session: session.key }, "resuming a run interrupted by a restart");
        history.startRun(run.id);
      }
      void this.enqueue(session.key, live, () => this.connectorsUp.then(() => this.drive(live, session.id)));
    }
    approvals.armAll();
  }

  /**
   * The connectors are up: show approval requests nobody saw, send replies nobody got, then let the
   * recovered runs go on (their events can reach a chat now).
   */
  connectorsReady(): void {
    for (const { channel, event } of this.deps.approvals.unshown()) {
      const live = this.live.get(event.runId);
      if (live) this.emit(live, event);
      else this.deps.fallbackListener(channel)?.(event);
    }
    sendOwedReplies(this.deps, this.endedAtStart ?? new Set());
    this.endedAtStart = undefined;
    this.markConnectorsUp();
  }

  status(): { running: number; queued: number; suspended: number; pendingApprovals: number } {
    let running = 0;
    let queued = 0;
    for (const lane of this.lanes.values()) {
      if (lane.current) running++;
      queued += Math.max(0, lane.waiting - (lane.current ? 1 : 0));
    }
    const suspended = [...this.live.values()].filter((l) => l.suspended).length;
    return { running: running - suspended, queued, suspended, pendingApprovals: this.deps.approvals.pendingTotal() };
  }

  /**
   * Stops taking runs; waits up to `graceMs` for running ones, then aborts them (recorded as interrupted).
   * Runs waiting for approval stay suspended in the store and resume after the next start.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.accepting = false;
    this.deps.approvals.disarmAll();
    // No queued run starts now: each is answered and left in the store for the next start. One queued behind
    // a run waiting for approval would otherwise hold the shutdown its whole grace for a turn that never comes.
    for (const live of [...this.submitted.values()]) live.leaveQueued?.();
    // A compaction is optional work: it is made again when the budget next needs it.
    for (const live of this.live.values()) if (live.afterReply) live.controller.abort(new ShutdownAbort());
    if (!(await this.idleWithin(graceMs))) {
      for (const live of this.live.values()) if (!live.suspended) live.controller.abort(new ShutdownAbort());
      await this.idleWithin(2000);
    }
    this.closed = true;
    this.deps.approvals.stopResuming();
  }

  private busy(): number {
    let busy = 0;
    for (const lane of this.lanes.values()) busy += lane.waiting - (lane.current?.suspended ? 1 : 0);
    return busy;
  }

  private idleWithin(ms: number): Promise<boolean> {
    if (this.busy() === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private notifyIdle(): void {
    // Deferred so a finished run's reply reaches its connector before shutdown closes the connectors.
    setImmediate(() => {
      if (this.busy() === 0) for (const f of this.idleWaiters.splice(0)) f();
    });
  }

  private enqueue(key: string, live: Live, start: () => Promise<RunOutcome>): Promise<RunOutcome> {
    const lane = this.lanes.get(key) ?? { tail: Promise.resolve(), waiting: 0 };
    this.lanes.set(key, lane);
    lane.waiting++;
    this.submitted.set(live.runId, live);
    let replied!: (outcome: RunOutcome) => void;
    const ended = new Promise<RunOutcome>((resolve) => {
      replied = resolve;
    });
    /** This run no longer holds its session's lane (a lane of nobody is dropped; a newer one for the key is kept). */
    const leaveLane = () => {
      lane.waiting--;
      if (lane.waiting === 0 && this.lanes.get(key) === lane) this.lanes.delete(key);
      this.notifyIdle();
    };
    live.endQueued = () => {
      if (live.stoppedQueued) return;
      const outcome: RunOutcome = { runId: live.runId, reply: "Stopped.", stopReason: "aborted" };
      try {
        if (this.deps.store.history.run(live.runId)?.status !== "queued") return;
        this.deps.store.history.endRun(live.runId, "aborted", "aborted", outcome.reply);
      } catch (err) {
        // Called from a connection's close event (the door's app gone), where a throw would end the daemon: the
        // run is aborted anyway, and ends as such when its turn comes.
        this.deps.log.error({ err, runId: live.runId }, "a queued run could not be ended at once; it ends at its turn");
        return;
      }
      live.stoppedQueued = outcome;
      // Ended: no longer stoppable, queued or waited for by a shutdown, though its turn is still to come.
      this.submitted.delete(live.runId);
      leaveLane();
      announceEnd(live, outcome, this.deps.log, (e) => this.emit(live, e));
      replied(outcome);
    };
    /** Not started before the shutdown: it stays queued in the store and runs after the next start. */
    const restarting: RunOutcome = {
      runId: live.runId,
      reply: "hermes is restarting; this message will be answered after it is back.",
      stopReason: "interrupted",
    };
    live.leaveQueued = () => {
      if (live.stoppedQueued) return;
      live.stoppedQueued = restarting;
      // It no longer holds the lane, or the shutdown would wait its whole grace for a run that will not start.
      this.submitted.delete(live.runId);
      leaveLane();
      replied(restarting);
    };
    const result = lane.tail.then(async () => {
      await this.starts.next();
      if (live.stoppedQueued) return live.stoppedQueued;
      live.endQueued = undefined;
      live.leaveQueued = undefined;
      if (!this.accepting && this.deps.store.history.run(live.runId)?.status === "queued") {
        leaveLane();
        return restarting;
      }
      lane.current = live;
      this.live.set(live.runId, live);
      try {
        const outcome = await start();
        replied(outcome);
        if (this.accepting) await workAfterReply(live.afterReply, this.deps.log, live.sessionKey);
        return outcome;
      } catch (err) {
        this.deps.log.error({ err, runId: live.runId }, "run failed unexpectedly");
        const reply = "Something went wrong inside hermes while handling this; the details are in the log.";
        this.deps.store.history.endRun(live.runId, "error", "error", reply);
        this.emit(live, { type: "error", runId: live.runId, message: reply });
        return { runId: live.runId, reply, stopReason: "model_error" as const };
      } finally {
        this.live.delete(live.runId);
        lane.current = undefined;
        leaveLane();
      }
    });
    lane.tail = result.catch(() => {});
    void result.finally(() => this.submitted.delete(live.runId)).catch(() => {});
    // The caller has its outcome once the reply is out; the lane stays busy until the idle work is done.
    return Promise.race([ended, result]);
  }

  private drive(live: Live, sessionId: number): Promise<RunOutcome> {
    return driveLive(live, sessionId, this.deps, { emit: (e) => this.emit(live, e), suspended: () => this.notifyIdle() });
  }

  private emit(live: Live, event: AgentEvent): void {
    if ((event.type === "run_end" || event.type === "error") && event.runId) this.endedAtStart?.add(event.runId);
    try {
      live.listener?.(event);
    } catch (err) {
      this.deps.log.warn({ err, event: event.type }, "an event listener threw; ignored");
    }
  }
}
