/**
 * The repeat guard's counts survive an approval (the run resumes, its counts rebuilt from the audit trail)
 * for a tool whose schema fills in a default (memory's `for: "me"`): the live count was kept by the parsed
 * arguments, the rebuilt one by the arguments as sent, and the same call counted from zero again. And a call
 * that asks first was counted only once it ran: three identical gated calls of one step were all asked and
 * all ran past the limit, and a denied one came back as a new question at every step up to max_steps.
 */
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/types.js";
import { makeAgent, recordingTool } from "../helpers/factories.js";
import { waitFor } from "../helpers/wait.js";

describe("repeat_limit across an approval", () => {
  it("a third identical memory call is blocked even when an approval came in between", async () => {
    const gated = recordingTool("clock", { needsConfirmation: true }); // a tool that asks first
    const a = await makeAgent({ tools: ["memory"], extraTools: [gated.tool], agent: { repeat_limit: 2, max_steps: 8 } });
    const remember = { toolCalls: [{ name: "memory", arguments: { action: "remember", fact: "likes tea" } }] };
    a.model.script(remember, remember, { toolCalls: [{ name: "clock", arguments: {} }] }, remember, { text: "done" });
    const events: AgentEvent[] = [];
    const { done } = a.runner.submit({ sessionKey: "cli:test", text: "go", source: "cli", listener: (e) => events.push(e) });
    const id = await waitFor(() => events.find((e) => e.type === "approval_requested") as { approvalId: string } | undefined, {
      message: "approval",
    });
    await waitFor(() => a.runner.status().suspended === 1, { message: "the run to be suspended" });
    a.approvals.decide(id.approvalId, true, "owner");
    await done;
    // repeat_limit 2: "likes tea" may be executed at most twice in this run (the second time it is already
    // remembered), and the third is blocked.
    const calls = a.store.db.prepare("SELECT decision, status FROM tool_calls WHERE tool = 'memory' ORDER BY rowid").all();
    expect(calls).toEqual([
      { decision: "auto", status: "ok" },
      { decision: "auto", status: "ok" },
      { decision: "blocked", status: expect.anything() },
    ]);
    expect(a.store.db.prepare("SELECT COUNT(*) FROM memories WHERE fact = 'likes tea'").pluck().get()).toBe(1);
  });

  /** Submits `text`, answering every question with `yes`; resolves the outcome and how many were asked. */
  const askedAll = async (a: Awaited<ReturnType<typeof makeAgent>>, yes: boolean) => {
    let asked = 0;
    const { done } = a.runner.submit({
      sessionKey: "cli:test",
      text: "go",
      source: "cli",
      listener: (e) => {
        if (e.type !== "approval_requested") return;
        asked++;
        setImmediate(() => a.approvals.decide(e.approvalId, yes, "owner"));
      },
    });
    return { outcome: await done, asked: () => asked };
  };

  it("an identical call that asks first is asked and run at most repeat_limit times, even three in one step", async () => {
    const send = recordingTool("send", { needsConfirmation: true });
    const a = await makeAgent({ extraTools: [send.tool], agent: { repeat_limit: 2 } });
    const pay = { name: "send", arguments: { word: "pay 100 EUR" } };
    a.model.script({ toolCalls: [pay, pay, pay] }, { text: "done" });
    const { outcome, asked } = await askedAll(a, true);
    expect(outcome.reply).toBe("done");
    expect(asked()).toBe(2);
    expect(send.runs).toHaveLength(2);
    expect(a.model.toolResults(1).at(-1)).toMatch(/^blocked: repeated call/);
  });

  it("a call the owner denied is not asked again at every step: it counts toward repeat_limit", async () => {
    const send = recordingTool("send", { needsConfirmation: true });
    const a = await makeAgent({ extraTools: [send.tool], agent: { repeat_limit: 2, max_steps: 8 } });
    a.model.respond(() => ({ toolCalls: [{ name: "send", arguments: { word: "pay 100 EUR" } }] }));
    const { asked } = await askedAll(a, false);
    expect(asked()).toBe(2);
    expect(send.runs).toEqual([]);
  });
});
