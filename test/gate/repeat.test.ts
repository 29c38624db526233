/** The repeat guard through the real loop and gate, in process: a model that loops is stopped, and says why. */
import { describe, expect, it } from "vitest";
import { makeAgent, type Turn } from "../helpers/factories.js";

const start = (agent: Record<string, unknown> = {}) =>
  makeAgent({ tools: ["clock", "notes", "read_file"], agent: { max_steps: 12, ...agent } });

describe("repeat detection", () => {
  it("runs clock {} exactly repeat_limit times, blocks the next call, and stops naming clock", async () => {
    const a = await start();
    a.model.respond(() => ({ toolCalls: [{ name: "clock", arguments: {} }] }));
    const { reply } = await a.ask("what time is it");
    expect(reply).toMatch(/stopped this run: the model kept repeating clock \{\}/);
    const audit = a.audit();
    expect(audit.map((r) => [r.decision, r.reason])).toEqual([
      ["auto", null],
      ["auto", null],
      ["blocked", "repeated call"],
      ["blocked", "repeated after block"],
    ]);
    expect(audit.filter((r) => r.status === "ok")).toHaveLength(2);
    expect(a.model.requests[3]?.messages.at(-1)?.content).toMatch(/^blocked: repeated call/);
  });

  it("treats the same arguments in a different key order as one signature", async () => {
    const a = await start();
    a.model.respond((_req, i) => ({
      toolCalls: [{ name: "notes", arguments: i % 2 ? { query: "milk", action: "search" } : { action: "search", query: "milk" } }],
    }));
    await a.ask("find milk");
    const audit = a.audit();
    expect(audit.filter((r) => r.decision === "auto")).toHaveLength(2);
    expect(audit[2]).toMatchObject({ decision: "blocked", reason: "repeated call", args: '{"action":"search","query":"milk"}' });
  });

  it("does not block calls whose arguments differ", async () => {
    const a = await start();
    a.model.script(
      ...[1, 2, 3, 4].map((n): Turn => ({ toolCalls: [{ name: "notes", arguments: { action: "search", query: `q${n}` } }] })),
      {
        text: "Searched four times.",
      },
    );
    expect((await a.ask("search")).reply).toBe("Searched four times.");
    expect(a.audit().map((r) => r.decision)).toEqual(["auto", "auto", "auto", "auto"]);
  });

  it("stops an A,B,A,B cycle whose results do not change", async () => {
    const a = await start({ repeat_limit: 5 });
    a.model.respond((_req, i) => ({ toolCalls: [{ name: "notes", arguments: { action: "search", query: i % 2 ? "b" : "a" } }] }));
    const { reply } = await a.ask("cycle");
    expect(reply).toMatch(/kept repeating notes .* \(repeated cycle\)/);
    const audit = a.audit();
    expect(audit.slice(0, 4).map((r) => r.decision)).toEqual(["auto", "auto", "auto", "auto"]);
    expect(audit[4]).toMatchObject({ decision: "blocked", reason: "repeated cycle" });
  });

  it("blocks a tool that keeps failing for the rest of the run", async () => {
    const a = await start();
    a.model.respond((_req, i) => ({ toolCalls: [{ name: "notes", arguments: { action: "delete", id: 1000 + i } }] }));
    const { reply } = await a.ask("delete things");
    expect(reply).toMatch(/notes failed 3 times in a row .*, so hermes stopped calling it/);
    const audit = a.audit();
    expect(audit.slice(0, 3).map((r) => r.status)).toEqual(["error", "error", "error"]);
    expect(audit[3]).toMatchObject({ decision: "blocked", reason: "failing tool", status: "skipped" });
    expect(a.model.requests[4]?.messages.at(-1)?.content).toMatch(/failed 3 times in a row/);
  });

  it("says which tool failed, how often and with what, when the model calls it again after the block", async () => {
    const a = await start();
    const paths = ["a.txt", "b.txt", "c.txt", "d.txt", "secret-link"];
    a.model.respond((_req, i) => ({ toolCalls: [{ name: "read_file", arguments: { path: paths[i] ?? `x${i}` } }] }));
    const { reply } = await a.ask("read my files");
    expect(reply).toMatch(/read_file failed 3 times in a row \(last error: .*'c\.txt' does not exist.*\), so hermes stopped calling it/);
    expect(reply).not.toMatch(/kept repeating|secret-link/);
    const audit = a.audit();
    expect(audit.map((r) => r.decision)).toEqual(["auto", "auto", "auto", "blocked", "blocked"]);
    expect(audit.at(-1)?.reason).toBe("failing tool after block");
  });
});
