import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel, Turn } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, type Hermes } from "../helpers/hermes.js";

interface AuditLine {
  tool: string;
  args: string;
  decision: string;
  reason: string | null;
  status: string;
}

async function auditOf(hermes: Hermes): Promise<AuditLine[]> {
  const result = await hermes.cli(["audit", "--json", "--limit", "100"]);
  expect(result.code).toBe(0);
  return result.stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditLine)
    .reverse();
}

describe.each(["ollama", "openai"] as const)("repeat detection with provider %s", (provider) => {
  let model: FakeModel;
  const start = async (agent: Record<string, unknown> = {}) => {
    const base = baseSettings(provider === "ollama" ? model.url : model.openaiUrl, provider);
    return useHermes({ ...base, agent: { max_steps: 12, ...agent } });
  };
  beforeEach(async () => {
    model = await useModel();
  });

  it("runs clock {} exactly repeat_limit times, blocks the next call, and stops naming clock", async () => {
    model.respond(() => ({ toolCalls: [{ name: "clock", arguments: {} }] }));
    const h = await start();
    const result = await h.ask("what time is it");
    expect(result.stdout).toMatch(/stopped this run: the model kept repeating clock \{\}/);
    const audit = await auditOf(h);
    expect(audit.map((a) => [a.decision, a.reason])).toEqual([
      ["auto", null],
      ["auto", null],
      ["blocked", "repeated call"],
      ["blocked", "repeated after block"],
    ]);
    expect(audit.filter((a) => a.status === "ok")).toHaveLength(2);
    const blockedResult = model.requests[3]?.messages.at(-1)?.content;
    expect(blockedResult).toMatch(/^blocked: repeated call/);
    const table = await h.cli(["audit"]);
    expect(table.stdout).toMatch(/clock \{\}\s+blocked \(repeated call\)/);
  });

  it("treats the same arguments in a different key order as one signature", async () => {
    model.respond((_req, i) => ({
      toolCalls: [{ name: "notes", arguments: i % 2 ? { query: "milk", action: "search" } : { action: "search", query: "milk" } }],
    }));
    const h = await start();
    await h.ask("find milk");
    const audit = await auditOf(h);
    expect(audit.filter((a) => a.decision === "auto")).toHaveLength(2);
    expect(audit[2]).toMatchObject({ decision: "blocked", reason: "repeated call", args: '{"action":"search","query":"milk"}' });
  });

  it("does not block calls whose arguments differ", async () => {
    model.script(...[1, 2, 3, 4].map((n): Turn => ({ toolCalls: [{ name: "notes", arguments: { action: "search", query: `q${n}` } }] })), {
      text: "Searched four times.",
    });
    const h = await start();
    expect((await h.ask("search")).stdout).toBe("Searched four times.\n");
    const audit = await auditOf(h);
    expect(audit.map((a) => a.decision)).toEqual(["auto", "auto", "auto", "auto"]);
  });

  it("stops an A,B,A,B cycle whose results do not change", async () => {
    model.respond((_req, i) => ({ toolCalls: [{ name: "notes", arguments: { action: "search", query: i % 2 ? "b" : "a" } }] }));
    const h = await start({ repeat_limit: 5 });
    const result = await h.ask("cycle");
    expect(result.stdout).toMatch(/kept repeating notes .* \(repeated cycle\)/);
    const audit = await auditOf(h);
    expect(audit.slice(0, 4).map((a) => a.decision)).toEqual(["auto", "auto", "auto", "auto"]);
    expect(audit[4]).toMatchObject({ decision: "blocked", reason: "repeated cycle" });
  });

  it("blocks a tool that keeps failing for the rest of the run", async () => {
    model.respond((_req, i) => ({ toolCalls: [{ name: "notes", arguments: { action: "delete", id: 1000 + i } }] }));
    const h = await start();
    const result = await h.ask("delete things");
    expect(result.stdout).toMatch(/notes failed 3 times in a row .*, so hermes stopped calling it/);
    const audit = await auditOf(h);
    expect(audit.slice(0, 3).map((a) => a.status)).toEqual(["error", "error", "error"]);
    expect(audit[3]).toMatchObject({ decision: "blocked", reason: "failing tool", status: "skipped" });
    expect(model.requests[4]?.messages.at(-1)?.content).toMatch(/failed 3 times in a row/);
  });

  it("says which tool failed, how often and with what, when the model calls it again after the block", async () => {
    const paths = ["a.txt", "b.txt", "c.txt", "d.txt", "secret-link"];
    model.respond((_req, i) => ({ toolCalls: [{ name: "read_file", arguments: { path: paths[i] ?? `x${i}` } }] }));
    const h = await start();
    const result = await h.ask("read my files");
    expect(result.stdout).toMatch(
      /read_file failed 3 times in a row \(last error: .*'c\.txt' does not exist.*\), so hermes stopped calling it/,
    );
    expect(result.stdout).not.toMatch(/kept repeating|secret-link/);
    const audit = await auditOf(h);
    expect(audit.map((a) => a.decision)).toEqual(["auto", "auto", "auto", "blocked", "blocked"]);
    expect(audit.at(-1)?.reason).toBe("failing tool after block");
  });
});

describe.each(["ollama", "openai"] as const)("the Hermes tool-call format with provider %s", (provider) => {
  let model: FakeModel;
  const start = async (format: "hermes" | "auto" = "hermes") => {
    const base = baseSettings(provider === "ollama" ? model.url : model.openaiUrl, provider);
    return useHermes({ ...base, model: { ...(base.model as object), tool_call_format: format } });
  };
  beforeEach(async () => {
    model = await useModel();
  });

  it("puts the tool signatures in the system prompt and returns results as <tool_response>", async () => {
    model.script({ text: '<tool_call>\n{"name": "clock", "arguments": {}}\n</tool_call>' }, { text: "It is late." });
    const h = await start();
    expect((await h.ask("time?")).stdout).toBe("It is late.\n");
    const first = model.requests[0];
    expect(first?.body.tools).toBeUndefined();
    expect(first?.messages[0]?.content).toMatch(/<tools>\n\{"type":"function","function":\{"name":"clock"/);
    const second = model.requests[1]?.messages ?? [];
    expect(second.at(-2)?.content).toContain('<tool_call>\n{"name":"clock","arguments":{}}\n</tool_call>');
    expect(second.at(-1)?.role).toBe(provider === "ollama" ? "tool" : "user");
    expect(second.at(-1)?.content).toMatch(/^<tool_response>\n\{"name":"clock","content":".*Europe\/Berlin/);
  });

  it("runs two calls from one reply and keeps the text around them", async () => {
    model.script(
      {
        text: 'Let me look.\n<tool_call>{"name": "clock", "arguments": {}}</tool_call>\nand\n<tool_call>{"name": "notes", "arguments": {"action": "list"}}</tool_call>\nOne moment.',
      },
      { text: "Done." },
    );
    const h = await start();
    expect((await h.ask("time and notes")).stdout).toBe("Done.\n");
    const audit = await auditOf(h);
    expect(audit.map((a) => [a.tool, a.status])).toEqual([
      ["clock", "ok"],
      ["notes", "ok"],
    ]);
    const echoed = model.requests[1]?.messages.find((m) => m.role === "assistant")?.content;
    expect(echoed).toMatch(/^Let me look\.\n\nand\n\nOne moment\.\n<tool_call>/);
    // Both results share the last message, in the order of the calls, as Hermes models were trained.
    const results = model.requests[1]?.messages.at(-1)?.content ?? "";
    expect([...results.matchAll(/<tool_response>\n\{"name":"(\w+)"/g)].map((m) => m[1])).toEqual(["clock", "notes"]);
  });

  it("answers a block cut off by the token limit with an error result, not an execution", async () => {
    model.script(
      { text: 'Saving.\n<tool_call>{"name": "notes", "arguments": {"action": "add", "text": "a very long' },
      { text: "Sorry, that got cut." },
    );
    const h = await start();
    expect((await h.ask("save a long note")).stdout).toBe("Sorry, that got cut.\n");
    const audit = await auditOf(h);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ tool: "notes", decision: "blocked", reason: "malformed call" });
    expect(model.requests[1]?.messages.at(-1)?.content).toMatch(/cut off/);
  });

  it("answers malformed JSON in a block with an error result, and the run goes on", async () => {
    model.script(
      { text: "<tool_call>{'name': 'clock'}</tool_call>" },
      { text: '<tool_call>{"name": "clock", "arguments": {}}</tool_call>' },
      { text: "Fixed." },
    );
    const h = await start();
    expect((await h.ask("time")).stdout).toBe("Fixed.\n");
    const audit = await auditOf(h);
    expect(audit.map((a) => a.decision)).toEqual(["blocked", "auto"]);
  });

  it("shows a <tool_call> inside a fenced code block verbatim, streamed and final, and runs nothing", async () => {
    const reply = [
      "Here is what a tool call looks like:",
      "```xml",
      '<tool_call>\n{"name": "<function-name>", "arguments": {<arguments>}}\n</tool_call>',
      "```",
      "Use `<tool_call>` tags only when you mean it.",
    ].join("\n");
    model.script({ text: reply });
    const h = await start("auto");
    const result = await h.ask("how do tool calls look?", "--json");
    const events = result.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; delta?: string; reply?: string });
    const streamed = events.flatMap((e) => (e.type === "text" ? [e.delta ?? ""] : [])).join("");
    expect(streamed).toBe(reply);
    expect(JSON.stringify(events.at(-1))).toContain(JSON.stringify(reply).slice(1, -1));
    expect(events.some((e) => e.type === "tool_call" || e.type === "blocked")).toBe(false);
    expect(model.requests).toHaveLength(1);
    expect(await auditOf(h)).toEqual([]);
  });

  it("auto mode parses printed calls when the reply has no native ones, fenced JSON included", async () => {
    model.script(
      { text: '```json\n{"name": "clock", "arguments": {}}\n```' },
      { text: '<tool_call>{"name": "notes", "arguments": {"action": "list"}}</tool_call>' },
      { text: "All done." },
    );
    const h = await start("auto");
    expect((await h.ask("go")).stdout).toBe("All done.\n");
    expect(model.requests[0]?.tools.length).toBeGreaterThan(0);
    const audit = await auditOf(h);
    expect(audit.map((a) => [a.tool, a.status])).toEqual([
      ["clock", "ok"],
      ["notes", "ok"],
    ]);
  });
});
