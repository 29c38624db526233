/**
 * A run stopped while still queued behind another run of its session ended only when its turn came: its
 * message joined the session first, a late stop could find it started and at the model, and meanwhile it was
 * still counted (queued, stoppable, waited for by a shutdown). A run still queued at a shutdown held its
 * session's lane, so the shutdown waited its whole grace for a run that would not start, and so did one queued
 * behind a run waiting for approval, whose turn never came before the stop.
 */
import { describe, expect, it } from "vitest";
import { z } from "../../src/config/zod.js";
import { defineTool } from "../../src/tools/define.js";
import { makeAgent, recordingTool } from "../helpers/factories.js";
import { waitFor } from "../helpers/wait.js";

/** A tool that answers when the test lets it: the session's current run holds its lane meanwhile. */
function holdingTool() {
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let entered!: () => void;
  const started = new Promise<void>((r) => {
    entered = r;
  });
  const tool = defineTool({
    name: "hold",
    description: "holds until released",
    input: z.strictObject({}),
    readOnly: true,
    run: async () => {
      entered();
      await released;
      return "held";
    },
  });
  return { tool, release, started };
}

/** Two messages to one session: the first run holds its lane (in the hold tool), the second waits behind it. */
async function secondQueued() {
  const hold = holdingTool();
  const a = await makeAgent({ extraTools: [hold.tool] });
  a.model.script({ toolCalls: [{ name: "hold" }] }, { text: "first done" });
  const first = a.submit("first", "cli:s");
  await hold.started;
  return { a, hold, first, second: a.submit("second", "cli:s") };
}

describe("a run stopped while still queued", () => {
  it("ends at once: its message does not join the session, it is no longer queued or stoppable, and its turn starts nothing", async () => {
    const { a, hold, first, second } = await secondQueued();
    expect(a.runner.status().queued).toBe(1);
    expect(a.runner.stopRun(second.runId)).toBe(true);
    expect(await second.done).toMatchObject({ stopReason: "aborted", reply: "Stopped." });
    expect(second.events.at(-1)).toMatchObject({ type: "run_end", stopReason: "aborted" });
    expect(a.store.history.run(second.runId)?.status).toBe("aborted");
    expect(a.runner.status().queued).toBe(0);
    expect(a.runner.stopRun(second.runId)).toBe(false);
    hold.release();
    expect(await first.done).toMatchObject({ stopReason: "done", reply: "first done" });
    expect(a.model.requests).toHaveLength(2); // the first run's two steps; none for the stopped one
    const said = a.store.db.prepare("SELECT content FROM messages WHERE role = 'user'").pluck().all() as string[];
    expect(said.map((m) => m.split("\n")[0])).toEqual(["first"]);
    a.model.script({ text: "third done" });
    expect(await a.submit("third", "cli:s").done).toMatchObject({ reply: "third done" });
  });

  it("still queued at a shutdown, it does not make the shutdown wait its grace", async () => {
    const { a, hold, first, second } = await secondQueued();
    // A grace far longer than the test's own time limit: only a shutdown that sees the lane free ends in time.
    const stopped = a.runner.shutdown(60_000);
    hold.release();
    await first.done;
    await stopped;
    expect(await second.done).toMatchObject({ stopReason: "interrupted" });
    expect(a.store.history.run(second.runId)?.status).toBe("queued"); // answered after the restart
  }, 10_000);

  it("queued behind a run waiting for approval, it does not make the shutdown wait its grace, and is told hermes restarts", async () => {
    const risky = recordingTool("risky", { needsConfirmation: true });
    const a = await makeAgent({ extraTools: [risky.tool] });
    a.model.script({ toolCalls: [{ name: "risky", arguments: { word: "now" } }] });
    const first = a.submit("first", "cli:s");
    await waitFor(() => a.runner.status().suspended === 1, { message: "the first run to wait for its approval" });
    const second = a.submit("second", "cli:s");
    expect(a.runner.status().queued).toBe(1);
    // Its turn never comes before the approval: only a shutdown that does not wait for it ends in time.
    await a.runner.shutdown(60_000);
    expect(await second.done).toMatchObject({ stopReason: "interrupted", reply: expect.stringMatching(/after it is back/) });
    expect(a.store.history.run(second.runId)?.status).toBe("queued"); // answered after the restart
    expect(a.store.history.run(first.runId)?.status).toBe("suspended"); // asked again after the restart
    expect(risky.runs).toEqual([]);
  }, 10_000);
});
