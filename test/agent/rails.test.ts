import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
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

// The guard's rules are tested in process (test/gate/repeat.test.ts); this is what the owner sees of them.
describe("a repeated call in the audit table", () => {
  it("shows the blocked call with its reason, and the reply says what the model kept repeating", async () => {
    const model = await useModel();
    model.respond(() => ({ toolCalls: [{ name: "clock", arguments: {} }] }));
    const h = await useHermes({ ...baseSettings(model.url), agent: { max_steps: 12 } });
    const result = await h.ask("what time is it");
    expect(result.stdout).toMatch(/stopped this run: the model kept repeating clock \{\}/);
    expect((await auditOf(h)).map((a) => [a.decision, a.reason])).toEqual([
      ["auto", null],
      ["auto", null],
      ["blocked", "repeated call"],
      ["blocked", "repeated after block"],
    ]);
    const table = await h.cli(["audit"]);
    expect(table.stdout).toMatch(/clock \{\}\s+blocked \(repeated call\)/);
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

describe("hermes audit --json with nothing recorded", () => {
  it("prints no line at all (an empty line is no JSON)", async () => {
    const model = await useModel();
    const h = await useHermes(baseSettings(model.url));
    expect(await h.cli(["audit", "--json"])).toMatchObject({ code: 0, stdout: "" });
    expect((await h.cli(["audit"])).stdout).toBe("no tool calls recorded\n");
  });
});
