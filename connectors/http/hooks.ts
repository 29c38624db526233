import type { RunOutcome } from "../../src/agent/types.js";
import type { HttpHook } from "../../src/config/schema.js";
import type { Core } from "../../src/connector.js";
import { errorMessage } from "../../src/errors.js";
import { newRunId } from "../../src/run-id.js";
import { approvalsTo, subsetTools, tellOwnerOnce } from "../cron/scheduled.js";
import { DATA_NOTE, renderHookPrompt } from "./template.js";

interface Pending {
  runId: string;
  body: unknown;
  calls: number;
  since: number;
  timer: NodeJS.Timeout;
}

interface HookState {
  lastRunAt: number;
  pending?: Pending;
}

export interface Accepted {
  runId: string;
  /** The call will be answered by a run that starts when the hook's `min_interval_s` is over. */
  coalesced: boolean;
}

/**
 * Runs webhooks: each call becomes a run in the hook's session whose reply goes to `deliver`, recorded
 * as a firing of `hook:<name>` like a cron slot. Within `min_interval_s` of a run, calls are not run one
 * by one: they are counted, and one run at the end of the interval reports the latest with the count.
 */
export function createHookRunner(core: Core) {
  const log = core.log.child({ connector: "http" });
  const states = new Map<string, HookState>();
  /** Run ids answered to a call whose run this process has not finished: waiting for the interval, starting or running. */
  const owed = new Set<string>();
  let lastSlot = 0;

  function accept(hook: HttpHook, body: unknown): Accepted {
    const state = states.get(hook.name) ?? { lastRunAt: 0 };
    states.set(hook.name, state);
    if (state.pending) {
      state.pending.body = body;
      state.pending.calls++;
      return { runId: state.pending.runId, coalesced: true };
    }
    const wait = state.lastRunAt + hook.min_interval_s * 1000 - Date.now();
    if (wait > 0) {
      const pending = { runId: newRunId(), body, calls: 1, since: Date.now() };
      state.pending = { ...pending, timer: setTimeout(() => firePending(hook, state), wait) };
      owed.add(pending.runId);
      return { runId: pending.runId, coalesced: true };
    }
    state.lastRunAt = Date.now();
    const runId = newRunId();
    owed.add(runId);
    launch(hook, promptOf(hook, body, 0, 0), runId);
    return { runId, coalesced: false };
  }

  function firePending(hook: HttpHook, state: HookState): void {
    const p = state.pending;
    if (!p) return;
    state.pending = undefined;
    state.lastRunAt = Date.now();
    try {
      launch(hook, promptOf(hook, p.body, p.calls, Date.now() - p.since), p.runId);
    } catch (err) {
      // In a timer: nothing a caller sent may escape it and end the process.
      owed.delete(p.runId);
      log.error({ hook: hook.name, err }, "hook run could not start");
    }
  }

  function launch(hook: HttpHook, text: string, runId: string): void {
    fire(hook, text, runId)
      .catch((err: unknown) => log.error({ hook: hook.name, runId, err }, "hook run could not be recorded"))
      // By now the run is recorded, or it never will be: its calls may be delivered again.
      .finally(() => owed.delete(runId));
  }

  function promptOf(hook: HttpHook, body: unknown, calls: number, spanMs: number): string {
    const text = `${renderHookPrompt(hook.prompt, body)}\n\n${DATA_NOTE}`;
    if (calls === 0) return text;
    const span = Math.max(1, Math.round(spanMs / 1000));
    return `${text}\n(Rate limit: this hook was called ${calls} time(s) in the last ${span} s; they are answered by this one run, and the values above are from the latest call.)`;
  }

  async function fire(hook: HttpHook, text: string, runId: string): Promise<void> {
    const job = `hook:${hook.name}`;
    let firing: number | undefined;
    let outcome: RunOutcome;
    try {
      lastSlot = Math.max(Date.now(), lastSlot + 1, (core.store.schedules.lastSlot(job) ?? 0) + 1);
      firing = core.store.schedules.claim(job, lastSlot);
      if (firing === undefined) return;
      const submitted = core.submit({
        sessionKey: hook.session ?? job,
        text,
        source: "hook",
        // Each hook is its own sender: recall gives a run the sessions its sender wrote in, and one hook's
        // payload (anyone's text) must not read what another hook's runs were told.
        sender: { id: job, name: job },
        channel: hook.deliver,
        runId,
        ...(hook.tools ? { tools: await subsetTools(hook.tools, core) } : {}),
        listener: approvalsTo(core, hook.deliver),
      });
      core.store.schedules.setRun(firing, runId);
      log.info({ hook: hook.name, runId }, "hook run started");
      outcome = await submitted.done;
    } catch (err) {
      log.error({ hook: hook.name, err }, "hook run could not start");
      try {
        if (firing !== undefined) core.store.schedules.finish(firing, "error", { error: errorMessage(err) });
      } catch {
        // The store refused the first write too (a full disk): the log line above is all there is.
      }
      return;
    }
    await finish(hook, firing, outcome);
  }

  async function finish(hook: HttpHook, firing: number, outcome: RunOutcome): Promise<void> {
    const { schedules } = core.store;
    if (outcome.stopReason === "model_error" || outcome.stopReason === "interrupted") {
      schedules.finish(firing, "error", { error: outcome.reply });
      log.warn({ hook: hook.name, stopReason: outcome.stopReason }, "hook run failed");
      await tellOwnerOnce(core, log, `hook:${hook.name}:told`, hook.deliver, `The webhook "${hook.name}" could not run: ${outcome.reply}`);
      return;
    }
    try {
      const { messageId } = await core.deliver(hook.deliver, outcome.reply);
      schedules.finish(firing, "ok", { messageId });
      core.store.inbound.setValue(`hook:${hook.name}:told`, "");
      log.info({ hook: hook.name, deliver: hook.deliver, messageId }, "hook reply delivered");
    } catch (err) {
      schedules.finish(firing, "delivery_failed", { error: errorMessage(err) });
      log.error({ hook: hook.name, err }, "hook ran but its reply could not be delivered");
    }
  }

  return {
    accept,
    /** Whether a call was answered with this run id and its run is still to come from this process (or running). */
    owes: (runId: string): boolean => owed.has(runId),
    /**
     * Calls still waiting for their interval are dropped (and logged): they were never promised more than a
     * run id, and a delivery among them runs when its sender delivers it again.
     */
    stop(): void {
      for (const [name, state] of states) {
        if (!state.pending) continue;
        clearTimeout(state.pending.timer);
        log.warn({ hook: name, calls: state.pending.calls }, "hermes stopped before a rate-limited hook run started");
        owed.delete(state.pending.runId);
        state.pending = undefined;
      }
    },
  };
}

export type HookRunner = ReturnType<typeof createHookRunner>;
