import { beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { COMPACTION_MARKER } from "../../src/agent/compaction.js";
import { buildPrompt, DEFAULT_SYSTEM_PROMPT, OLD_RESULT_CHARS, TokenCalibration } from "../../src/agent/context.js";
import { configSchema, DEFAULT_TOOLS } from "../../src/config/schema.js";
import { latinLengthOf, promptTokens } from "../../src/model/tokens.js";
import type { ChatMessage, ToolCall } from "../../src/model/types.js";
import { openStore } from "../../src/store/store.js";
import { defineTool, toolSpec } from "../../src/tools/define.js";
import { loadTools } from "../../src/tools/registry.js";
import type { FakeModel, RecordedRequest } from "../fakes/model-server.js";
import { useInProcess, useModel } from "../helpers/fixture.js";
import { baseSettings, createTempDir } from "../helpers/hermes.js";
import type { startInProcess } from "../helpers/in-process.js";

type Wire = RecordedRequest["messages"][number];

/** Every assistant tool call is directly followed by its results, in order, and no result is orphaned. */
function expectIntactPairs(messages: Wire[]): void {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Wire & { tool_calls?: { id?: string }[] };
    if (m.role === "tool") expect(messages[i - 1]?.role === "assistant" || messages[i - 1]?.role === "tool").toBe(true);
    if (m.role !== "assistant" || !m.tool_calls?.length) continue;
    m.tool_calls.forEach((_, k) => {
      expect(messages[i + 1 + k]?.role).toBe("tool");
    });
  }
}

/** A built prompt's size as planPrompt counts it at `ratio`: the framing with the system prompt, then each message. */
function calibratedCost(prompt: ChatMessage[], ratio: number): number {
  const [system, ...rest] = prompt;
  const fixed = Math.ceil((promptTokens([system as ChatMessage], []) + 16) * ratio);
  return fixed + rest.reduce((sum, m) => sum + Math.ceil(promptTokens([m], []) * ratio), 0);
}

/** A step of parallel calls and their results, each result `result(call id, index)`. */
function parallelStep(calls: ToolCall[], result: (id: string, k: number) => string): ChatMessage[] {
  return [
    { role: "assistant", content: "", toolCalls: calls },
    ...calls.map((c, k) => ({ role: "tool" as const, content: result(c.id, k), toolCallId: c.id, toolName: c.name })),
  ];
}

function asChat(messages: Wire[]): ChatMessage[] {
  return messages.map((m) => ({ role: m.role, content: m.content }) as ChatMessage);
}

describe("the prompt budget", () => {
  it("keeps the newest turns, drops whole old turns, and cuts an oversized current message", () => {
    const history: ChatMessage[] = [];
    for (let i = 0; i < 300; i++) {
      history.push({ role: "user", content: `question ${i} ${"x".repeat(200)}` });
      history.push({ role: "assistant", content: "", toolCalls: [{ id: `c${i}`, name: "clock", args: {} }] });
      history.push({ role: "tool", content: `result ${i} ${"y".repeat(2000)}`, toolCallId: `c${i}`, toolName: "clock" });
      history.push({ role: "assistant", content: `answer ${i}` });
    }
    const prompt = buildPrompt({ system: "sys", tools: [], history, budgetTokens: 3000 });
    expect(promptTokens(prompt, [])).toBeLessThanOrEqual(3000);
    expect(prompt.at(-1)).toEqual({ role: "assistant", content: "answer 299" });
    expect(prompt[1]?.role).toBe("user");
    const results = prompt.filter((m) => m.role === "tool");
    expect(results.slice(0, -1).every((m) => m.content.length <= OLD_RESULT_CHARS)).toBe(true);
    expect(results.at(-1)?.content.length).toBeGreaterThan(OLD_RESULT_CHARS);

    const huge: ChatMessage[] = [{ role: "user", content: `${"a".repeat(50_000)}END` }];
    const cut = buildPrompt({ system: "sys", tools: [], history: huge, budgetTokens: 1000 });
    expect(promptTokens(cut, [])).toBeLessThanOrEqual(1000);
    expect(cut[1]?.content).toMatch(/characters of this message were cut/);
    expect(cut[1]?.content.endsWith("END")).toBe(true);
  });

  it("stays within a calibrated budget when it cuts the current message, at any size", () => {
    for (const ratio of [1, 1.1, 1.37, 2.3]) {
      for (let budget = 300; budget <= 900; budget += 7) {
        const prompt = buildPrompt({
          system: "sys",
          tools: [],
          history: [{ role: "user", content: "x".repeat(20_000) }],
          budgetTokens: budget,
          ratio,
        });
        expect(calibratedCost(prompt, ratio)).toBeLessThanOrEqual(budget);
      }
    }
  });

  it("fits a run whose own steps outgrow the window: its oldest steps left out, the newest kept, every call with its result", () => {
    const history: ChatMessage[] = [{ role: "user", content: "read all these pages" }];
    for (let step = 0; step < 8; step++) {
      const calls = [0, 1, 2].map((k) => ({ id: `c${step}-${k}`, name: "http_get", args: { url: `https://example.org/${step}/${k}` } }));
      history.push({ role: "assistant", content: "", toolCalls: calls });
      for (const c of calls)
        history.push({ role: "tool", content: `page ${c.id} ${"p".repeat(5000)}`, toolCallId: c.id, toolName: "http_get" });
    }
    for (const ratio of [1, 1.3]) {
      const prompt = buildPrompt({ system: "sys", tools: [], history, budgetTokens: 1500, ratio });
      expect(calibratedCost(prompt, ratio)).toBeLessThanOrEqual(1500);
      expect(prompt[1]?.content).toMatch(/^read all these pages[\s\S]*earlier step\(s\) of this run were left out/);
      // The newest step is there, whole: its call and each of its results, in order.
      const calls = prompt.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []).map((c) => c.id) : []));
      expect(calls.slice(-3)).toEqual(["c7-0", "c7-1", "c7-2"]);
      const results = prompt.flatMap((m) => (m.role === "tool" ? [m.toolCallId] : []));
      expect(results).toEqual(calls);
      expect(prompt.filter((m) => m.role === "tool").every((m) => m.content.startsWith("page c"))).toBe(true);
    }
  });

  it("gives the current turn's results the room there is, not an old result's 600 characters", () => {
    const body = "Step: do this exactly. ".repeat(520); // ~12,000 characters: a skill the model just read
    const skillTurn: ChatMessage[] = [
      { role: "user", content: "use the trip-planner skill" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "skill", args: { name: "trip-planner" } }] },
      { role: "tool", content: body, toolCallId: "c1", toolName: "skill" },
    ];
    for (const ratio of [1, 1.3]) {
      const prompt = buildPrompt({ system: "sys", tools: [], history: skillTurn, budgetTokens: 3072, ratio });
      expect(calibratedCost(prompt, ratio)).toBeLessThanOrEqual(3072);
      expect(calibratedCost(prompt, ratio)).toBeGreaterThan(3072 * 0.9);
      expect(prompt.find((m) => m.role === "tool")?.content.length).toBeGreaterThan(7000);
      expect(prompt[1]?.content).toBe("use the trip-planner skill");
    }
    // Nine short results and a long one: the short ones whole, the long one gets what they leave.
    const calls = Array.from({ length: 10 }, (_, k) => ({ id: `c${k}`, name: "http_get", args: { k } }));
    const mixed: ChatMessage[] = [
      { role: "user", content: "check these" },
      ...parallelStep(calls, (_, k) => (k === 9 ? `long ${"x".repeat(20_000)}` : `short ${k}`)),
    ];
    const prompt = buildPrompt({ system: "sys", tools: [], history: mixed, budgetTokens: 3072 });
    expect(calibratedCost(prompt, 1)).toBeLessThanOrEqual(3072);
    const results = prompt.filter((m) => m.role === "tool").map((m) => m.content);
    expect(results.slice(0, 9)).toEqual(calls.slice(0, 9).map((_, k) => `short ${k}`));
    expect(results[9]?.length).toBeGreaterThan(8000);
  });

  it("stays within the budget when the current step's many parallel results do not fit even at their shortest", () => {
    // A small window (2048 tokens, the default tools taking most of it) and a step of 20 parallel calls with long results.
    const calls = Array.from({ length: 20 }, (_, k) => ({ id: `c${k}`, name: "read_file", args: { path: `notes/2024/file-${k}.txt` } }));
    const history: ChatMessage[] = [
      { role: "user", content: `earlier ${"e".repeat(400)}` },
      { role: "assistant", content: "earlier answer" },
      { role: "user", content: "read all my notes files" },
      ...parallelStep(calls, (id) => `file ${id} ${"f".repeat(5000)}`),
    ];
    for (const ratio of [1, 1.3]) {
      for (const budget of [1000, 1200]) {
        const prompt = buildPrompt({ system: "sys", tools: [], history, budgetTokens: budget, ratio });
        expect(calibratedCost(prompt, ratio)).toBeLessThanOrEqual(budget);
        expect(prompt[1]?.content).toMatch(/^read all my notes files/);
        // Every call is still there with its result, right after it.
        expect(prompt.filter((m) => m.role === "tool").map((m) => (m.role === "tool" ? m.toolCallId : ""))).toEqual(calls.map((c) => c.id));
      }
    }
  });

  it("stays within the budget when the model's own call is over it: its long argument is cut, the call and its result kept", () => {
    const text = `${"Dear all, the plan for the week. ".repeat(1800)}Signed, Alice`; // ~60,000 characters to write
    const turn: ChatMessage[] = [
      { role: "user", content: "write the plan to plan.txt" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "write_file", args: { path: "plan.txt", text, append: false } }] },
      { role: "tool", content: "wrote plan.txt (60,013 characters)", toolCallId: "c1", toolName: "write_file" },
    ];
    for (const ratio of [1, 1.3]) {
      for (const budget of [1500, 4096]) {
        const prompt = buildPrompt({ system: "sys", tools: [], history: turn, budgetTokens: budget, ratio });
        expect(calibratedCost(prompt, ratio)).toBeLessThanOrEqual(budget);
        expect(prompt.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
        const call = prompt[2]?.role === "assistant" ? prompt[2].toolCalls?.[0] : undefined;
        const args = call?.args as { path: string; text: string; append: boolean };
        expect(call).toMatchObject({ id: "c1", name: "write_file" });
        expect(args).toMatchObject({ path: "plan.txt", append: false });
        // The text's head and tail around the cut's marker, as long as the room allows.
        expect(args.text).toMatch(/^Dear all, the plan[\s\S]*characters not shown in this copy[\s\S]*Signed, Alice$/);
        expect(args.text.length).toBeGreaterThan(budget / 4);
        expect(prompt[3]?.content).toBe("wrote plan.txt (60,013 characters)");
        expect(prompt[1]?.content).toBe("write the plan to plan.txt");
      }
    }
    // What the tool ran with is whole: the history given is not changed.
    const asked = turn[1]?.role === "assistant" ? turn[1].toolCalls?.[0]?.args : undefined;
    expect((asked as { text?: string } | undefined)?.text).toBe(text);
  });

  it("keeps a run's earlier steps beside a long call, and a failed call's short result whole beside a long message", () => {
    const reads = [0, 1, 2, 3].flatMap((k): ChatMessage[] => [
      { role: "assistant", content: "", toolCalls: [{ id: `r${k}`, name: "read_file", args: { path: `notes/${k}.txt` } }] },
      { role: "tool", content: `note ${k} ${"n".repeat(770)}`, toolCallId: `r${k}`, toolName: "read_file" },
    ]);
    const write: ChatMessage[] = [
      { role: "assistant", content: "", toolCalls: [{ id: "w", name: "write_file", args: { path: "all.txt", text: "x".repeat(60_000) } }] },
      { role: "tool", content: "wrote all.txt", toolCallId: "w", toolName: "write_file" },
    ];
    const run: ChatMessage[] = [{ role: "user", content: "put my notes together in all.txt" }, ...reads, ...write];
    for (const ratio of [1, 1.3]) {
      const prompt = buildPrompt({ system: "sys", tools: [], history: run, budgetTokens: 4096, ratio });
      expect(calibratedCost(prompt, ratio)).toBeLessThanOrEqual(4096);
      // Cut to an old result's length, the call leaves room for the reads: none is left out.
      expect(prompt[1]?.content).toBe("put my notes together in all.txt");
      expect(prompt.filter((m) => m.role === "tool").map((m) => (m.role === "tool" ? m.toolCallId : ""))).toEqual([
        "r0",
        "r1",
        "r2",
        "r3",
        "w",
      ]);
    }
    const failed: ChatMessage[] = [
      { role: "user", content: `write this down:\n${"A long paste of text. ".repeat(180)}` },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "w", name: "write_file", args: { path: "notes/paste.txt", text: "y".repeat(5000) } }],
      },
      {
        role: "tool",
        content:
          "error: write_file: notes/paste.txt is read-only (the owner made it so); choose another file or ask the owner, it was not changed",
        toolCallId: "w",
        toolName: "write_file",
      },
    ];
    for (const ratio of [1, 1.3]) {
      const prompt = buildPrompt({ system: "sys", tools: [], history: failed, budgetTokens: 1500, ratio });
      expect(calibratedCost(prompt, ratio)).toBeLessThanOrEqual(1500);
      expect(prompt[3]?.content).toBe(failed[2]?.content);
    }
  });

  it("keeps the turn of a long call when the window jumps: its argument shortened as an old result is, not the turn left out", () => {
    const text = `${"The plan for the week, day by day. ".repeat(1700)}End of plan.`; // ~60,000 characters
    const history: ChatMessage[] = [
      { role: "user", content: "hello" },
      { role: "assistant", content: "Hello! How can I help?" },
      { role: "user", content: "write the plan to plan.txt" },
      { role: "assistant", content: "", toolCalls: [{ id: "w", name: "write_file", args: { path: "plan.txt", text } }] },
      { role: "tool", content: "wrote plan.txt", toolCallId: "w", toolName: "write_file" },
      { role: "assistant", content: "Done: the plan is in plan.txt." },
      { role: "user", content: "what did you just write, and where?" },
    ];
    for (const ratio of [1, 1.3]) {
      const prompt = buildPrompt({ system: "sys", tools: [], history, budgetTokens: 4096, ratio });
      expect(calibratedCost(prompt, ratio)).toBeLessThanOrEqual(4096);
      expect(prompt.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
        "hello",
        "write the plan to plan.txt",
        "what did you just write, and where?",
      ]);
      const call = prompt.find((m) => m.role === "assistant" && m.toolCalls?.length);
      const args = (call?.role === "assistant" ? call.toolCalls?.[0]?.args : undefined) as { path: string; text: string };
      expect(args.path).toBe("plan.txt");
      expect(args.text).toMatch(/^The plan for the week[\s\S]*characters not shown in this copy[\s\S]*End of plan\.$/);
      expect(args.text.length).toBeLessThanOrEqual(OLD_RESULT_CHARS);
      expect(prompt.at(-2)?.content).toBe("Done: the plan is in plan.txt.");
    }
  });

  it("keeps parallel calls' short arguments (what each result is) while their long results are shortened", () => {
    const calls = Array.from({ length: 12 }, (_, k) => ({
      id: `g${k}`,
      name: "http_get",
      args: {
        url: `https://news.example.org/2026/12/06/the-long-title-of-article-number-${k}-about-the-weather-and-the-trains?ref=feed&page=${k}`,
      },
    }));
    const turn: ChatMessage[] = [
      { role: "user", content: "read these articles and sum them up" },
      ...parallelStep(calls, (id) => `article ${id} ${"a".repeat(6000)}`),
    ];
    for (const ratio of [1, 1.3]) {
      const prompt = buildPrompt({ system: "sys", tools: [], history: turn, budgetTokens: 1500, ratio });
      expect(calibratedCost(prompt, ratio)).toBeLessThanOrEqual(1500);
      const kept = prompt[2]?.role === "assistant" ? (prompt[2].toolCalls ?? []) : [];
      expect(kept.map((c) => c.args)).toEqual(calls.map((c) => c.args));
    }
  });

  it("stays within the budget with many parallel calls of short arguments: the largest calls' arguments are left out", () => {
    const calls = Array.from({ length: 20 }, (_, k) => ({
      id: `n${k}`,
      name: "notes",
      args: { action: "add", text: `note ${k}: ${"t".repeat(160)}` },
    }));
    const turn: ChatMessage[] = [{ role: "user", content: "save each of these as a note" }, ...parallelStep(calls, (id) => `saved ${id}`)];
    for (const ratio of [1, 1.3]) {
      for (const budget of [900, 1200]) {
        const prompt = buildPrompt({ system: "sys", tools: [], history: turn, budgetTokens: budget, ratio });
        expect(calibratedCost(prompt, ratio)).toBeLessThanOrEqual(budget);
        const kept = prompt[2]?.role === "assistant" ? (prompt[2].toolCalls ?? []) : [];
        expect(kept.map((c) => c.id)).toEqual(calls.map((c) => c.id));
        expect(kept.some((c) => JSON.stringify(c.args).includes("characters not shown"))).toBe(true);
        expect(prompt.filter((m) => m.role === "tool").map((m) => (m.role === "tool" ? m.toolCallId : ""))).toEqual(calls.map((c) => c.id));
      }
    }
  });

  it("fits a chat in Chinese: its history, an old result and a pasted message each counted at a token or more a character", () => {
    // A real tokenizer gives a Chinese character 0.7–1.3 tokens: counted at 3.6 characters a token, as Latin
    // text is, such a request held 3–5 times the window and Ollama dropped its front (system prompt, tools).
    const han = (text: string) => [...text.matchAll(/\p{Script=Han}/gu)].length;
    const sentence = "今天下午三点在咖啡馆和朋友见面，记得带上那本书。";
    const history: ChatMessage[] = [];
    for (let i = 0; i < 80; i++) {
      history.push({ role: "user", content: `${i}：${sentence.repeat(4)}` });
      history.push({ role: "assistant", content: "", toolCalls: [{ id: `c${i}`, name: "read_file", args: {} }] });
      history.push({ role: "tool", content: sentence.repeat(60), toolCallId: `c${i}`, toolName: "read_file" });
      history.push({ role: "assistant", content: `好的，${sentence}` });
    }
    history.push({ role: "user", content: sentence.repeat(400) });
    for (const budget of [2048, 4096]) {
      const prompt = buildPrompt({ system: "sys", tools: [], history, budgetTokens: budget });
      expect(han(prompt.map((m) => m.content).join(""))).toBeLessThanOrEqual(budget);
      expect(promptTokens(prompt, [])).toBeLessThanOrEqual(budget);
      expect(prompt.at(-1)?.content).toContain("characters of this message were cut");
      const oldResults = prompt.filter((m) => m.role === "tool");
      expect(oldResults.every((m) => han(m.content) <= OLD_RESULT_CHARS / 3.6 / 1.25 + 1)).toBe(true);
    }
  });

  it("stays within the budget when a text is in Chinese at its head and Latin after it: a cut keeps the head and tail it can afford", () => {
    // The cut keeps the head and the tail of a text: counted at the whole text's average, a dense head cost 2-3 times the room.
    const mixed = `${"今天下午三点在咖啡馆和朋友见面。".repeat(200)}${"x".repeat(30000)}`;
    for (const budget of [600, 1000, 2000]) {
      for (const ratio of [1, 1.3]) {
        const message = buildPrompt({ system: "sys", tools: [], history: [{ role: "user", content: mixed }], budgetTokens: budget, ratio });
        expect(calibratedCost(message, ratio)).toBeLessThanOrEqual(budget);
        const history: ChatMessage[] = [
          { role: "user", content: "read it" },
          { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "read_file", args: {} }] },
          { role: "tool", content: mixed, toolCallId: "c1", toolName: "read_file" },
        ];
        const result = buildPrompt({ system: "sys", tools: [], history, budgetTokens: budget, ratio });
        expect(calibratedCost(result, ratio)).toBeLessThanOrEqual(budget);
        expect(result.at(-1)?.content).toContain("characters cut");
      }
    }
    // An old result keeps what 600 characters of Latin text take, whatever its scripts and wherever they are.
    const history: ChatMessage[] = [
      { role: "user", content: "read it" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "read_file", args: {} }] },
      { role: "tool", content: mixed, toolCallId: "c1", toolName: "read_file" },
      { role: "assistant", content: "done" },
      { role: "user", content: "next" },
    ];
    const old = buildPrompt({ system: "sys", tools: [], history, budgetTokens: 2000 }).find((m) => m.role === "tool");
    expect(old?.content).toContain("characters cut");
    expect(latinLengthOf(old?.content ?? "")).toBeLessThanOrEqual(OLD_RESULT_CHARS);
  });

  it("puts every tool result right after its call: moved back into place, orphans dropped, missing ones filled in", () => {
    const call = (id: string) => ({ id, name: "clock", args: {} });
    const result = (id: string, content: string): ChatMessage => ({ role: "tool", content, toolCallId: id, toolName: "clock" });
    const history: ChatMessage[] = [
      result("x0", "orphan before any turn"),
      { role: "user", content: "first" },
      { role: "assistant", content: "", toolCalls: [call("a"), call("b")] },
      result("b", "b's result, which arrived first"),
      { role: "user", content: "an approval came in between" },
      result("a", "a's result, after the suspension"),
      { role: "assistant", content: "", toolCalls: [call("c")] },
      result("zz", "a result for no call"),
      { role: "assistant", content: "done" },
    ];
    const prompt = buildPrompt({ system: "sys", tools: [], history, budgetTokens: 3000 });
    expect(prompt.map((m) => (m.role === "tool" ? `tool ${m.toolCallId}: ${m.content}` : `${m.role}: ${m.content}`))).toEqual([
      "system: sys",
      "user: first",
      "assistant: ",
      "tool a: a's result, after the suspension",
      "tool b: b's result, which arrived first",
      "user: an approval came in between",
      "assistant: ",
      "tool c: no result: the run ended before this call was answered.",
      "assistant: done",
    ]);
    const intact: ChatMessage[] = [{ role: "user", content: "q" }, history[2] as ChatMessage, result("a", "A"), result("b", "B")];
    expect(buildPrompt({ system: "sys", tools: [], history: intact, budgetTokens: 3000 }).slice(1)).toEqual(intact);
  });

  it("calibrates its estimate from the prompt sizes the model reports, ignoring cached counts", () => {
    const calibration = new TokenCalibration();
    for (let i = 0; i < 20; i++) calibration.observe("m", 1000, 1500);
    expect(calibration.ratio("m")).toBeCloseTo(1.5, 1);
    calibration.observe("m", 1000, 100);
    expect(calibration.ratio("m")).toBeCloseTo(1.5, 1);
    expect(calibration.ratio("other")).toBe(1);
  });

  it("keeps its ratio, and saves nothing, when a reported or estimated size is not a usable number", () => {
    const saved: number[] = [];
    const calibration = new TokenCalibration({ load: () => undefined, save: (_m, r) => void saved.push(r) });
    calibration.observe("m", 1000, 1500);
    const before = calibration.ratio("m");
    for (const [estimated, reported] of [
      [1000, Number.NaN],
      [1000, "n/a" as unknown as number],
      [Number.NaN, 1500],
      [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY],
    ] as const)
      calibration.observe("m", estimated, reported);
    expect(calibration.ratio("m")).toBe(before);
    expect(saved).toEqual([before]);
  });

  it("keeps the default system prompt and the default tools' signatures under 1,500 tokens", async () => {
    const dir = createTempDir();
    const config = configSchema().parse({ tools: { files: { root: dir.path } } });
    const store = openStore(":memory:");
    const { tools } = await loadTools(DEFAULT_TOOLS, { config, store, now: () => new Date() });
    const specs = [...tools.values()].map(toolSpec);
    const bytes = Buffer.byteLength(DEFAULT_SYSTEM_PROMPT) + Buffer.byteLength(JSON.stringify(specs));
    const tokens = promptTokens([{ role: "system", content: DEFAULT_SYSTEM_PROMPT }], specs);
    console.log(`default prompt: ${bytes} bytes, ~${tokens} tokens, tools: ${specs.map((s) => s.name).join(", ")}`);
    expect(tokens).toBeLessThan(1500);
    store.close();
    dir.cleanup();
  });
});

describe("prompts the model receives", () => {
  let model: FakeModel;
  let hermes: Awaited<ReturnType<typeof startInProcess>> | undefined;
  beforeEach(async () => {
    model = await useModel();
  });

  it("never exceed the budget over a 300-turn session, keep the newest messages and intact call/result pairs", async () => {
    const settings = baseSettings(model.url);
    hermes = await useInProcess(
      { ...settings, model: { ...(settings.model as object), context_tokens: 3072, max_output_tokens: 256 } },
      [],
    );
    model.respond((req) => {
      const last = req.messages.at(-1);
      if (last?.role === "user" && /^turn \d*[05] /.test(last.content)) {
        return { toolCalls: [{ name: "notes", arguments: { action: "search", query: last.content.slice(0, 12) } }] };
      }
      return { text: `reply to ${last?.content.slice(0, 10)} ${"z".repeat(300)}` };
    });
    for (let i = 0; i < 300; i++) {
      const outcome = await hermes.ask(`turn ${i} ${"w".repeat(150)}`, "cli:long");
      expect(outcome.stopReason).toBe("done");
    }
    const budget = 3072 - 256;
    const sizes: number[] = [];
    for (const [i, req] of model.requests.entries()) {
      const specs = req.tools.map((t) => t.function) as never;
      expect(promptTokens(asChat(req.messages), specs)).toBeLessThanOrEqual(budget);
      expectIntactPairs(req.messages);
      const lastUser = req.messages.findLast((m) => m.role === "user");
      // A summary is asked for at the end of the chat's own prompt (so the model server reuses it), or of a transcript.
      expect(lastUser?.content).toMatch(req.compaction ? new RegExp(`^(${COMPACTION_MARKER}|Summary so far:)`) : /^turn \d+ /);
      if (i > 100 && !req.compaction) sizes.push(req.messages.length);
    }
    // Between jumps the window grows again: it does not shrink to the newest turn for good.
    expect(Math.max(...sizes)).toBeGreaterThan(8);
    const final = model.requests.at(-1);
    expect(final?.messages.findLast((m) => m.role === "user")?.content).toMatch(/^turn 299 /);
  });

  it("never exceed the budget in a run whose own tool results outgrow the window", async () => {
    const page = defineTool({
      name: "fetch_page",
      description: "reads a long page",
      input: z.strictObject({ n: z.number() }),
      readOnly: true,
      run: ({ n }) => `page ${n} ${"P".repeat(5000)}`,
    });
    const settings = baseSettings(model.url);
    hermes = await useInProcess({ ...settings, model: { ...(settings.model as object), context_tokens: 4096, max_output_tokens: 512 } }, [
      page,
    ]);
    const three = (step: number) => ({ toolCalls: [0, 1, 2].map((k) => ({ name: "fetch_page", arguments: { n: step * 3 + k } })) });
    model.script(three(0), three(1), three(2), three(3), three(4), three(5), { text: "done" });
    expect((await hermes.ask("read these pages", "cli:pages")).reply).toBe("done");
    expect(model.requests).toHaveLength(7);
    for (const req of model.requests) {
      expect(promptTokens(asChat(req.messages), req.tools.map((t) => t.function) as never)).toBeLessThanOrEqual(4096 - 512);
      expect(req.messages[1]?.content).toMatch(/^read these pages/);
      expectIntactPairs(req.messages);
    }
  });

  it("shortens old tool results when the window jumps, and keeps the turn that brought them (without summaries)", async () => {
    const settings = baseSettings(model.url);
    hermes = await useInProcess(
      {
        ...settings,
        context: { summaries: false },
        model: { ...(settings.model as object), context_tokens: 8192, max_output_tokens: 512 },
        tools: { enabled: ["notes"] },
      },
      [],
    );
    model.respond(() => ({ text: "ok" }));
    for (let i = 0; i < 3; i++) await hermes.ask(`early ${i} ${"e".repeat(4600)}`, "cli:big");
    const long = "L".repeat(3500);
    model.script({ toolCalls: [{ name: "notes", arguments: { action: "add", text: long } }] });
    model.script({ toolCalls: [{ name: "notes", arguments: { action: "list" } }] }, { text: "listed" });
    await hermes.ask("save and list", "cli:big");
    const firstResult =
      model.requests
        .at(-1)
        ?.messages.filter((m) => m.role === "tool")
        .at(-1)?.content ?? "";
    expect(firstResult.length).toBeGreaterThan(3000);
    const before = model.requests.length;
    await hermes.ask(`next ${"n".repeat(5500)}`, "cli:big");
    const later = model.requests.at(-1)?.messages ?? [];
    expect(model.requests.length).toBe(before + 1);
    // The window jumped: the early turns are gone, the turn with the results is kept with them shortened.
    expect(later.some((m) => m.content.startsWith("early"))).toBe(false);
    expect(later.some((m) => m.content.startsWith("save and list"))).toBe(true);
    const results = later.filter((m) => m.role === "tool");
    expect(results).toHaveLength(2);
    expect(results.every((m) => m.content.length <= OLD_RESULT_CHARS)).toBe(true);
    expect(results.some((m) => m.content.includes("characters cut"))).toBe(true);
  });

  it("keeps the prefix byte-identical between consecutive requests", async () => {
    hermes = await useInProcess(baseSettings(model.url), []);
    model.script({ text: "first answer" }, { toolCalls: [{ name: "clock", arguments: {} }] }, { text: "second answer" }, { text: "third" });
    await hermes.ask("first", "cli:p");
    await hermes.ask("second", "cli:p");
    await hermes.ask("third", "cli:p");
    const [a, b, c, d] = model.requests.map((r) => JSON.stringify({ tools: r.body.tools, messages: r.messages }));
    for (const [earlier, later] of [
      [a, b],
      [b, c],
      [c, d],
    ] as [string, string][]) {
      const prefix = earlier.slice(0, earlier.length - 2);
      expect(later.startsWith(prefix)).toBe(true);
    }
  });

  it("shows remembered facts in a new session's prompt", async () => {
    const settings = baseSettings(model.url);
    hermes = await useInProcess({ ...settings, tools: { enabled: ["clock", "memory"] } }, []);
    model.script({ toolCalls: [{ name: "memory", arguments: { action: "remember", fact: "partner's name is Sam" } }] }, { text: "Noted." });
    await hermes.ask("my partner is Sam", "cli:m1");
    hermes.daemon.core.newSession("cli:m1");
    model.script({ text: "Hi" });
    await hermes.ask("hello", "cli:m1");
    const system = model.requests.at(-1)?.messages[0]?.content;
    expect(system).toContain("What you know about the owner");
    expect(system).toContain('- "partner\'s name is Sam" (#1)');
    expect(model.requests.at(-1)?.messages).toHaveLength(2);
  });
});
