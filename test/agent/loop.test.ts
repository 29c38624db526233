/** The agent loop and the runner in process: a scripted model, the real gate, approvals and tools, a fresh store. */
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/types.js";
import { makeAgent, recordingTool, type Turn } from "../helpers/factories.js";
import { waitFor } from "../helpers/wait.js";

/** The model repeats the tool results it was given, so the reply shows what the gate did. */
const echoResults = (req: { messages: { role: string; content: unknown }[] }): Turn => ({
  text: `Result: ${req.messages
    .filter((m) => m.role === "tool")
    .map((m) => m.content)
    .join(" | ")}`,
});

function approvalsAsked(events: AgentEvent[], count: number) {
  return waitFor(
    () => {
      const ids = events.flatMap((e) => (e.type === "approval_requested" ? [e.approvalId] : []));
      return ids.length >= count && ids;
    },
    { message: `${count} approval request(s)` },
  );
}

describe("the loop", () => {
  it("runs a tool call, feeds the result back, and ends with the model's reply", async () => {
    const a = await makeAgent({ tools: ["clock"] });
    a.model.script({ toolCalls: [{ name: "clock" }] }, { text: "It is late." });
    const outcome = await a.ask("what time is it?");
    expect(outcome).toMatchObject({ reply: "It is late.", stopReason: "done" });
    expect(a.model.toolResults(1)[0]).toMatch(/Europe\/Berlin/);
    expect(outcome.events.map((e) => e.type)).toEqual(["run_start", "tool_call", "tool_result", "run_end"]);
  });

  it("answers a malformed or cut-off <tool_call> block with an error result, and the run goes on", async () => {
    const a = await makeAgent({ tools: ["clock", "notes"] });
    a.model.script(
      { text: "<tool_call>{'name': 'clock'}</tool_call>" },
      { text: 'Saving.\n<tool_call>{"name": "notes", "arguments": {"action": "add", "text": "a very long' },
      { text: "Sorry." },
    );
    expect((await a.ask("time")).reply).toBe("Sorry.");
    expect(a.audit().map((r) => [r.decision, r.reason, r.status])).toEqual([
      ["blocked", "malformed call", "skipped"],
      ["blocked", "malformed call", "skipped"],
    ]);
    expect(a.model.toolResults(1)[0]).toMatch(/not valid JSON/);
    expect(a.model.toolResults(2)[1]).toMatch(/cut off/);
  });

  it("says so when the model sends an empty reply", async () => {
    const a = await makeAgent();
    a.model.script({ text: "  " });
    expect((await a.ask("hi")).reply).toBe("(the model sent an empty reply)");
  });

  it("runs at most 20 tool calls of one step and tells the user the rest were dropped", async () => {
    const a = await makeAgent({ tools: ["notes"] });
    const calls = Array.from({ length: 500 }, (_, i) => ({ name: "notes", arguments: { action: "add", text: `note ${i}` } }));
    a.model.script({ toolCalls: calls }, { text: "done" });
    const { reply } = await a.ask("take notes");
    expect(reply).toContain("the model asked for 500 tool calls in one step; only the first 20 were run");
    expect(a.audit()).toHaveLength(20);
    expect(a.model.toolResults(1)).toHaveLength(20);
  });

  it("cuts a model that never stops calling tools at max_steps, with a reply that says so", async () => {
    const a = await makeAgent({ tools: ["notes"], agent: { max_steps: 3 } });
    a.model.respond((_req, i) => ({ toolCalls: [{ name: "notes", arguments: { action: "search", query: `q${i}` } }] }));
    const { reply, stopReason } = await a.ask("loop forever");
    expect(stopReason).toBe("max_steps");
    expect(reply).toContain("stopped after 3 model steps");
    expect(reply).toContain("agent.max_steps");
    expect(a.model.requests).toHaveLength(3);
  });

  it("runs read-only calls of one step together, and results go back in call order", async () => {
    let active = 0;
    let most = 0;
    const look = (name: string) => ({
      ...recordingTool(name, { readOnly: true }).tool,
      run: async () => {
        most = Math.max(most, ++active);
        await new Promise((r) => setImmediate(r));
        active--;
        return `${name} done`;
      },
    });
    const a = await makeAgent({ extraTools: [look("look_a"), look("look_b")] });
    a.model.script({ toolCalls: [{ name: "look_a" }, { name: "look_b" }] }, { text: "both looked" });
    expect((await a.ask("look")).reply).toBe("both looked");
    expect(most).toBe(2);
    expect(a.model.toolResults(1)).toEqual(["look_a done", "look_b done"]);
  });

  it("runs calls with side effects one after another, in the model's order", async () => {
    const order: string[] = [];
    const poke = (name: string) => ({
      ...recordingTool(name).tool,
      run: async () => {
        order.push(`start ${name}`);
        await new Promise((r) => setImmediate(r));
        order.push(`end ${name}`);
        return `${name} done`;
      },
    });
    const a = await makeAgent({ extraTools: [poke("poke_b"), poke("poke_a")] });
    a.model.script({ toolCalls: [{ name: "poke_b" }, { name: "poke_a" }] }, { text: "both poked" });
    expect((await a.ask("poke")).reply).toBe("both poked");
    expect(order).toEqual(["start poke_b", "end poke_b", "start poke_a", "end poke_a"]);
    expect(a.model.toolResults(1)).toEqual(["poke_b done", "poke_a done"]);
  });
});

describe("a run waiting for approval", () => {
  const start = async (agent: Record<string, unknown> = {}) => {
    const risky = recordingTool("risky", { needsConfirmation: true });
    const a = await makeAgent({ tools: ["clock"], extraTools: [risky.tool], agent });
    a.model.respond(echoResults);
    return { a, risky };
  };

  it("is suspended, and resumes exactly once when approved", async () => {
    const { a, risky } = await start();
    a.model.script({ toolCalls: [{ name: "risky", arguments: { word: "four" } }] });
    const run = a.submit("do it");
    const [id] = await approvalsAsked(run.events, 1);
    await waitFor(() => a.runner.status().suspended === 1, { message: "the run to be suspended" });
    expect(a.approvals.decide(String(id), true, "cli").ok).toBe(true);
    expect(a.approvals.decide(String(id), true, "cli").ok).toBe(false);
    expect(await run.done).toMatchObject({ reply: "Result: risky ran four", stopReason: "done" });
    expect(risky.runs).toEqual([{ word: "four" }]);
    expect(a.model.requests).toHaveLength(2);
    expect(run.events.filter((e) => e.type === "approval_decided")).toEqual([expect.objectContaining({ decision: "approved", by: "cli" })]);
  });

  it("asks for each of two gated calls in one step; approving one and denying the other runs exactly one", async () => {
    const { a, risky } = await start();
    a.model.script({
      toolCalls: [
        { name: "risky", arguments: { word: "six" } },
        { name: "risky", arguments: { word: "seven" } },
        { name: "clock", arguments: {} },
      ],
    });
    const run = a.submit("two things");
    const ids = await approvalsAsked(run.events, 2);
    expect(a.approvals.decide(String(ids[0]), false, "cli").ok).toBe(true);
    expect(a.model.requests).toHaveLength(1);
    expect(a.approvals.decide(String(ids[1]), true, "cli").ok).toBe(true);
    await run.done;
    expect(risky.runs).toEqual([{ word: "seven" }]);
    const results = a.model.toolResults(1);
    expect(results[0]).toMatch(/denied/);
    expect(results[1]).toBe("risky ran seven");
    expect(results[2]).toMatch(/Europe\/Berlin/);
    expect(
      a
        .audit()
        .map((r) => `${r.decision}:${r.decided_by}`)
        .sort(),
    ).toEqual(["approved:cli", "auto:policy", "denied:cli"]);
  });

  it("asks about each of two calls the endpoint sent under one id, and runs only the one approved", async () => {
    const { a, risky } = await start();
    a.model.script({
      toolCalls: [
        { id: "x", name: "risky", arguments: { word: "harmless" } },
        { id: "x", name: "risky", arguments: { word: "evil" } },
      ],
    });
    const run = a.submit("two things");
    const ids = await approvalsAsked(run.events, 2);
    expect(a.approvals.decide(String(ids[0]), true, "cli").ok).toBe(true);
    expect(a.approvals.decide(String(ids[1]), false, "cli").ok).toBe(true);
    await run.done;
    expect(risky.runs).toEqual([{ word: "harmless" }]);
    expect(a.audit().map((r) => `${r.args} ${r.decision}`)).toEqual(['{"word":"harmless"} approved', '{"word":"evil"} denied']);
  });

  it("asks about a gated call that shares its id with an ungated call of the same step", async () => {
    const { a, risky } = await start();
    a.model.script({
      toolCalls: [
        { id: "x", name: "clock" },
        { id: "x", name: "risky", arguments: { word: "now" } },
      ],
    });
    const run = a.submit("do it");
    await approvalsAsked(run.events, 1);
    expect(risky.runs).toEqual([]);
    expect(a.audit().map((r) => `${r.tool} ${r.decision}`)).toEqual(["clock auto", "risky pending"]);
    expect(a.runner.stop("cli:test")).toBe(true);
    await run.done;
    expect(risky.runs).toEqual([]);
  });

  it("runs a call that reuses the id of an earlier run's call as a call of its own", async () => {
    const { a } = await start();
    a.model.script({ toolCalls: [{ id: "call_1", name: "clock" }] });
    await a.ask("time");
    a.model.script({ toolCalls: [{ id: "call_1", name: "risky", arguments: { word: "later" } }] });
    const run = a.submit("later");
    await approvalsAsked(run.events, 1);
    expect(a.audit().map((r) => `${r.tool} ${r.decision}`)).toEqual(["clock auto", "risky pending"]);
    expect(a.runner.stop("cli:test")).toBe(true);
    await run.done;
  });

  it("decided after the shutdown let its runs go, it waits for the next start, which runs the call once", async () => {
    const { a, risky } = await start();
    a.model.script({ toolCalls: [{ name: "risky", arguments: { word: "five" } }] });
    const run = a.submit("do it");
    const [id] = await approvalsAsked(run.events, 1);
    await waitFor(() => a.runner.status().suspended === 1, { message: "the run to be suspended" });
    await a.runner.shutdown(0);
    // A button pressed while the connectors close: the decision is kept, the store is about to close.
    expect(a.approvals.decide(String(id), true, "telegram:42").ok).toBe(true);
    const next = await makeAgent({ dir: a.dir, tools: ["clock"], extraTools: [risky.tool] });
    next.model.respond(echoResults);
    await waitFor(() => next.store.history.run(run.runId)?.status === "done", { message: "the next start to end the run" });
    expect(risky.runs).toEqual([{ word: "five" }]);
    expect(run.events.filter((e) => e.type === "tool_result")).toEqual([]);
    expect(next.unattended).toContainEqual(expect.objectContaining({ type: "run_end", reply: "Result: risky ran five" }));
  });

  it("ends when nobody answers in time: not run, the model told", async () => {
    const { a, risky } = await start({ confirm_timeout_s: 0.05 });
    a.model.script({ toolCalls: [{ name: "risky", arguments: { word: "five" } }] });
    const { reply } = await a.ask("do it");
    expect(reply).toMatch(/^Result: nobody answered the confirmation request in time/);
    expect(risky.runs).toEqual([]);
    expect(a.audit()[0]).toMatchObject({ decision: "expired", decided_by: "timeout" });
  });

  it("stops on /stop: the approval is denied by the stop, the call never runs", async () => {
    const { a, risky } = await start();
    a.model.script({ toolCalls: [{ name: "risky" }] });
    const run = a.submit("do it");
    await approvalsAsked(run.events, 1);
    expect(a.runner.stop("cli:test")).toBe(true);
    expect(await run.done).toMatchObject({ reply: "Stopped.", stopReason: "aborted" });
    expect(risky.runs).toEqual([]);
    expect(a.audit()[0]).toMatchObject({ decision: "denied", decided_by: "stop" });
    expect(a.approvals.pendingTotal()).toBe(0);
  });
});
