/** A run the runner holds, and how one run is driven step by step until it ends (or waits for approval). */
import type { Logger } from "pino";
import type { Approvals } from "../gate/approvals.js";
import type { Person } from "../store/memory.js";
import { compactAfterRun, driveRun } from "./loop.js";
import type { LoopDeps } from "./loop-deps.js";
import type { AgentEvent, EventListener, RunOutcome } from "./types.js";

export interface Live {
  runId: string;
  sessionKey: string;
  channel: string;
  tools?: string[];
  controller: AbortController;
  listener: EventListener | undefined;
  sender?: Person;
  /** A run of a group chat, whose senders change from message to message. */
  group?: boolean;
  /** Waiting for approvals: it holds its session's lane but no model or tool is working for it. */
  suspended?: boolean;
  /** Work for idle time once the reply has gone out (a compaction); the session's next run waits for it. */
  afterReply?: () => Promise<void>;
  /** Ends a run stopped while still queued, at once (set while it waits for its turn). */
  endQueued?: () => void;
  /** Leaves a run still queued at a shutdown for the next start, at once (set while it waits for its turn). */
  leaveQueued?: () => void;
  /** The outcome of a run stopped (or left for the next start) while still queued: its turn starts nothing. */
  stoppedQueued?: RunOutcome;
}

export interface RunnerDeps extends LoopDeps {
  log: Logger;
  /** Decisions on approvals resume the runs that wait for them. */
  approvals: Approvals;
  /** Listener for runs nobody is attached to (resumed after a restart): usually the chat connector. */
  fallbackListener: (channel: string, replyTo?: string) => EventListener | undefined;
  timeNote: () => string;
  /** Resolves once the tools a run may see are known (MCP servers listed theirs, or gave up): runs wait for it. */
  toolsKnown?: () => Promise<void>;
  /**
   * The system prompt for a run starting now, talking to `sender`; in a group, what only that sender may
   * see is the `note` after their message instead (so the prompt's start is the same whoever speaks, and
   * the model server's cache holds).
   */
  prompt: (sender?: Person, group?: boolean) => { system: string; note?: string };
}

/** The runner's side of a driven run: where its events go, and its news that it now waits for approval. */
export interface DriveHooks {
  emit: (event: AgentEvent) => void;
  suspended: () => void;
}

/** Drives a started run to its end: a step at a time, waiting between steps for the approvals it asked for. */
export async function driveLive(live: Live, sessionId: number, deps: RunnerDeps, hooks: DriveHooks): Promise<RunOutcome> {
  await deps.toolsKnown?.();
  for (;;) {
    const { system, note } = deps.prompt(live.sender, live.group);
    const run = {
      runId: live.runId,
      sessionId,
      sessionKey: live.sessionKey,
      channel: live.channel,
      allowedTools: live.tools ? new Set(live.tools) : undefined,
      signal: live.controller.signal,
      emit: hooks.emit,
      system,
      ...(note && { note }),
    };
    const outcome = await driveRun(run, deps);
    if (outcome.stopReason !== "suspended") {
      announceEnd(live, outcome, deps.log, hooks.emit);
      if (!live.controller.signal.aborted) live.afterReply = () => compactAfterRun(run, deps, outcome.reply);
      return outcome;
    }
    // Decisions may have arrived while the rest of the step ran; only wait for ones still open.
    if (deps.approvals.pendingCount(live.runId) > 0 && !live.controller.signal.aborted) {
      deps.log.info({ runId: live.runId, session: live.sessionKey }, "run waiting for approval");
      live.suspended = true;
      hooks.suspended();
      await deps.approvals.settled(live.runId, live.controller.signal);
      live.suspended = false;
    }
  }
}

/** A run's end, in the log and to its listener. */
export function announceEnd(live: Live, outcome: RunOutcome, log: Logger, emit: (event: AgentEvent) => void): void {
  log.info({ runId: live.runId, session: live.sessionKey, stopReason: outcome.stopReason }, "run ended");
  emit({ type: "run_end", runId: live.runId, reply: outcome.reply, stopReason: outcome.stopReason });
}
