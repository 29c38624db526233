/** The gate's rules, in process: each test builds a gate on a fresh store and hands it one step's calls. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { DENIED_RESULT, EXPIRED_RESULT } from "../../src/gate/types.js";
import type { ToolCall } from "../../src/model/types.js";
import { makeGate, recordingTool } from "../helpers/factories.js";
import { waitFor } from "../helpers/wait.js";

const call = (id: string, name: string, args: unknown = {}): ToolCall => ({ id, name, args });

describe("the gate", () => {
  it("answers an unknown tool with the tools that exist, and runs nothing", async () => {
    const g = await makeGate({ tools: ["clock", "notes"] });
    expect(await g.step([call("a", "teleport", { to: "mars" })])).toEqual({ pending: 0 });
    expect(g.results().get("a")).toMatch(/^error: there is no tool named 'teleport'. Tools that exist: clock, notes\.$/);
    expect(g.audit()).toEqual([
      expect.objectContaining({ tool: "teleport", decision: "blocked", reason: "unknown tool", status: "skipped" }),
    ]);
    expect(g.events.map((e) => e.type)).toEqual(["tool_call", "blocked"]);
  });

  it("answers arguments that fail the tool's schema with what is wrong, and does not run the tool", async () => {
    const echo = recordingTool("echo");
    const g = await makeGate({ extraTools: [echo.tool] });
    await g.step([call("a", "echo", { word: 42 })]);
    expect(g.results().get("a")).toMatch(/^error: invalid arguments for echo:\n.*word/s);
    expect(echo.runs).toEqual([]);
    expect(g.audit()[0]).toMatchObject({ decision: "blocked", reason: "invalid arguments" });
  });

  it("answers a call whose arguments could not be parsed with the parse error", async () => {
    const echo = recordingTool("echo");
    const g = await makeGate({ extraTools: [echo.tool] });
    await g.step([{ id: "a", name: "echo", args: undefined, parseError: "arguments are not valid JSON (Unexpected token)" }]);
    expect(g.results().get("a")).toBe("error: arguments are not valid JSON (Unexpected token). Send the call again as valid JSON.");
    expect(g.audit()[0]).toMatchObject({ args: '"arguments are not valid JSON (Unexpected token)"', reason: "malformed call" });
    expect(echo.runs).toEqual([]);
  });

  it("turns a throwing tool into an error result the model reads", async () => {
    const broken = recordingTool("broken", { fails: true });
    const g = await makeGate({ extraTools: [broken.tool] });
    await g.step([call("a", "broken")]);
    expect(g.results().get("a")).toBe("error: broken broke");
    expect(g.audit()[0]).toMatchObject({ decision: "auto", status: "error" });
    expect(g.events.at(-1)).toMatchObject({ type: "tool_result", ok: false, summary: "error: broken broke" });
  });

  it("does not take another call's audit row, under the same id, as this call's decision", async () => {
    const echo = recordingTool("echo");
    const risky = recordingTool("risky", { needsConfirmation: true });
    const g = await makeGate({ extraTools: [echo.tool, risky.tool] });
    // Decided and not yet run when the second call comes: its row must not pass for the second call's.
    await g.step([call("a", "echo", { word: "first" }), call("a", "risky", { word: "evil" }), call("a", "echo", { word: "other" })]);
    expect(risky.runs).toEqual([]);
    expect(echo.runs).toEqual([{ word: "first" }]);
    expect(g.audit()).toEqual([expect.objectContaining({ tool: "echo", args: '{"word":"first"}', decision: "auto", status: "ok" })]);
  });

  it("blocks the third identical call of a run (repeat_limit 2) and says why", async () => {
    const echo = recordingTool("echo", { readOnly: true });
    const g = await makeGate({ extraTools: [echo.tool] });
    for (const id of ["a", "b", "c"]) await g.step([call(id, "echo", { word: "same" })]);
    expect(echo.runs).toHaveLength(2);
    expect(g.results().get("c")).toMatch(/^blocked: repeated call/);
    expect(g.audit().map((a) => a.decision)).toEqual(["auto", "auto", "blocked"]);
  });

  describe("a call that needs the owner's confirmation", () => {
    const gated = async (agent: Record<string, unknown> = {}) => {
      const risky = recordingTool("risky", { needsConfirmation: true });
      const g = await makeGate({ extraTools: [risky.tool], agent });
      const calls = [call("a", "risky", { word: "now" })];
      const first = await g.step(calls);
      const asked = g.events.find((e) => e.type === "approval_requested");
      if (asked?.type !== "approval_requested") throw new Error("no approval was requested");
      return { g, risky, calls, first, asked };
    };

    it("raises an approval that says what, why and until when; the tool does not run", async () => {
      const { g, risky, first, asked } = await gated();
      expect(first).toEqual({ pending: 1 });
      expect(asked.prompt).toBe(
        'hermes wants to run risky with:\n{\n  "word": "now"\n}\nWhy this asks first: risky asks for confirmation for these arguments.\nIf nobody answers within 10 minutes it will not run.',
      );
      expect(g.approvals.pendingCount(g.runId)).toBe(1);
      expect(risky.runs).toEqual([]);
    });

    it("asks for any tool named in agent.confirm", async () => {
      const clockGate = await makeGate({ tools: ["clock"], agent: { confirm: ["clock"] } });
      expect(await clockGate.step([call("a", "clock")])).toEqual({ pending: 1 });
      expect(clockGate.events.at(-1)).toMatchObject({
        type: "approval_requested",
        reason: "clock always needs your confirmation (agent.confirm)",
      });
    });

    it("runs the call exactly once after approval, however often the step is worked through or the button pressed", async () => {
      const { g, risky, calls, asked } = await gated();
      expect(g.approvals.decide(asked.approvalId, true, "telegram:1")).toMatchObject({ ok: true, message: "approved: risky" });
      const answered = new Set<string>();
      expect(await g.step(calls, answered)).toEqual({ pending: 0 });
      await g.step(calls, answered);
      await g.step(calls);
      expect(risky.runs).toEqual([{ word: "now" }]);
      expect(g.results().get("a")).toBe("risky ran now");
      const again = g.approvals.decide(asked.approvalId, true, "telegram:1");
      expect(again).toMatchObject({ ok: false, code: "already_decided" });
      expect(again.message).toMatch(/already approved by telegram:1 at \d{4}-/);
      expect(g.audit()[0]).toMatchObject({ decision: "approved", decided_by: "telegram:1", status: "ok" });
    });

    it("does not run a denied call, and tells the model it was denied", async () => {
      const { g, risky, calls, asked } = await gated();
      expect(g.approvals.decide(asked.approvalId, false, "cli")).toMatchObject({ ok: true, message: "denied: risky" });
      await g.step(calls);
      expect(risky.runs).toEqual([]);
      expect(g.results().get("a")).toBe(DENIED_RESULT);
      expect(g.audit()[0]).toMatchObject({ decision: "denied", decided_by: "cli", status: "skipped" });
    });

    it("expires an unanswered request at its deadline: not run, the model told, a late approval refused", async () => {
      const { g, risky, calls, asked } = await gated({ confirm_timeout_s: 0.05 });
      await waitFor(() => g.approvals.pendingCount(g.runId) === 0, { message: "the approval to expire" });
      await g.step(calls);
      expect(risky.runs).toEqual([]);
      expect(g.results().get("a")).toBe(EXPIRED_RESULT);
      expect(g.audit()[0]).toMatchObject({ decision: "expired", decided_by: "timeout" });
      const late = g.approvals.decide(asked.approvalId, true, "cli");
      expect(late).toMatchObject({ ok: false, code: "expired" });
      expect(late.message).toMatch(/expired at .*; the call did not run/);
    });

    it("shows the arguments as the tool will run them, not as the model wrote them", async () => {
      // zod reads a URL without its line breaks and tabs: the request must show the host that is fetched.
      const g = await makeGate({ tools: ["http_get", "memory"], agent: { confirm: ["http_get", "memory"] } });
      await g.step([
        call("a", "http_get", { url: "http://example.com\n.attacker.example/" }),
        call("b", "memory", { action: "remember", fact: "likes tea" }),
      ]);
      const asked = g.events.flatMap((e) => (e.type === "approval_requested" ? [e] : []));
      expect(asked.map((e) => e.args)).toEqual([
        { url: "http://example.com.attacker.example/" },
        { action: "remember", fact: "likes tea", for: "me" },
      ]);
      expect(asked[0]?.prompt).toContain('"url": "http://example.com.attacker.example/"');
      // `hermes approvals` and a request shown again after a restart read the stored row.
      expect(g.store.approvals.get(asked[0]?.approvalId ?? "")?.args).toBe('{"url":"http://example.com.attacker.example/"}');
    });

    it("says so when an unknown approval id is decided", async () => {
      const { g } = await gated();
      expect(g.approvals.decide("nope", true, "cli")).toEqual({ ok: false, code: "unknown", message: "there is no approval nope" });
    });
  });
});

describe("a confirm_timeout_s longer than setTimeout's longest delay (~24.8 days)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("keeps the request open until its own deadline, and expires it then", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const risky = recordingTool("risky", { needsConfirmation: true });
    const g = await makeGate({ extraTools: [risky.tool], agent: { confirm_timeout_s: 60 * 86_400 } }); // 60 days
    await g.step([call("a", "risky", { word: "now" })]);
    expect(g.approvals.pendingCount(g.runId)).toBe(1);
    vi.advanceTimersByTime(25 * 86_400_000); // past the first timer, 35 days before the deadline
    expect(g.approvals.pendingCount(g.runId)).toBe(1);
    vi.advanceTimersByTime(36 * 86_400_000);
    expect(g.approvals.pendingCount(g.runId)).toBe(0);
    expect(g.audit().map((r) => r.decision)).toEqual(["expired"]);
  });
});
