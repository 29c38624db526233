import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { SUMMARY_ADDITION, SUMMARY_STOPS } from "../../src/agent/compact-idle.js";
import { DEFAULT_TOOLS } from "../../src/config/schema.js";
import { promptTokens } from "../../src/model/tokens.js";
import type { ChatMessage } from "../../src/model/types.js";
import { defineTool } from "../../src/tools/define.js";
import { FAKE_SUMMARY, type FakeModel, type RecordedRequest, startFakeModel } from "../fakes/model-server.js";
import { baseSettings } from "../helpers/hermes.js";
import { startInProcess } from "../helpers/in-process.js";

const CONTEXT = 4096;
const BUDGET = CONTEXT - 1024;

const tokensOf = (r: RecordedRequest, messages = r.messages) =>
  promptTokens(
    messages.map((m) => ({ role: m.role, content: m.content, toolCalls: m.tool_calls }) as ChatMessage),
    r.tools.map((t) => t.function) as never,
  );

/** Request `b` carries everything `a` did, byte for byte, and more after it. */
const extends_ = (a: RecordedRequest, b: RecordedRequest) =>
  JSON.stringify(a.body.tools) === JSON.stringify(b.body.tools) &&
  b.messages.length > a.messages.length &&
  JSON.stringify(b.messages.slice(0, a.messages.length)) === JSON.stringify(a.messages);

/** Indexes of the requests that do not extend the one before them. */
const jumpsIn = (requests: RecordedRequest[]) =>
  requests.flatMap((r, k) => (k > 0 && !extends_(requests[k - 1] as RecordedRequest, r) ? [k] : []));

describe("a long chat and the model's prompt cache", () => {
  let model: FakeModel;
  let hermes: Awaited<ReturnType<typeof startInProcess>> | undefined;
  beforeEach(async () => {
    model = await startFakeModel();
    // A clock call every sixth turn; replies of about a hundred tokens.
    model.respond((req) => {
      const n = Number(req.messages.findLast((m) => m.role === "user")?.content.match(/^turn (\d+)/)?.[1]);
      if (req.messages.at(-1)?.role === "user" && n % 6 === 5) return { toolCalls: [{ name: "clock", arguments: {} }] };
      return { text: `answer ${n}: ${"the reply goes on; ".repeat(20)}` };
    });
  });
  afterEach(async () => {
    await hermes?.close();
    hermes = undefined;
    await model.close();
  });

  /** `turns` turns (60) at a window of `context` tokens (4k); each turn's reply time (when its outcome arrived). */
  const chat = async (summaries: boolean, context = CONTEXT, turns = 60) => {
    const settings = baseSettings(model.url);
    hermes = await startInProcess(
      {
        ...settings,
        model: { ...(settings.model as object), context_tokens: context },
        tools: { enabled: [...DEFAULT_TOOLS] },
        context: { summaries },
      },
      [],
    );
    const replied: number[] = [];
    for (let i = 0; i < turns; i++) {
      const outcome = await hermes.ask(`turn ${i}: ${`point ${i} of a message with some words, `.repeat(12)}`, "cli:cache");
      expect(outcome.stopReason).toBe("done");
      replied.push(performance.now());
    }
    return replied;
  };

  for (const summaries of [false, true]) {
    it(`keeps its prefix between jumps, and every request fits (summaries ${summaries ? "on" : "off"})`, async () => {
      const replied = await chat(summaries);
      const requests = model.requests;
      for (const r of requests) {
        // Never over the window; a chat request within its budget, its newest message present.
        if (r.compaction) expect(tokensOf(r)).toBeLessThanOrEqual(CONTEXT);
        else {
          expect(tokensOf(r)).toBeLessThanOrEqual(BUDGET);
          expect(r.messages.findLast((m) => m.role === "user")?.content).toMatch(/^turn \d+: /);
        }
      }
      expect(requests.at(-1)?.messages.findLast((m) => m.role === "user")?.content).toMatch(/^turn 59: /);
      const jumps = jumpsIn(requests);
      // Requests k and k+1 share everything but the new turn, except at a jump: a few, far apart.
      expect(jumps.length).toBeGreaterThan(3);
      expect(jumps.length).toBeLessThanOrEqual(15);
      for (let j = 1; j < jumps.length; j++) expect((jumps[j] as number) - (jumps[j - 1] as number)).toBeGreaterThanOrEqual(3);
      for (const k of jumps) {
        const r = requests[k] as RecordedRequest;
        // A jump keeps the system prompt and tools, and drops well under the budget: the turns kept before the
        // current one (none after a compaction at 4k: the summary takes their room) within half of it.
        expect(r.messages[0]?.content.startsWith(requests[0]?.messages[0]?.content ?? "?")).toBe(true);
        const current = r.messages.findLastIndex((m) => m.role === "user");
        const before = r.messages.slice(0, current);
        if (before.filter((m) => m.role === "user").length > 1) expect(tokensOf(r, before)).toBeLessThanOrEqual(BUDGET / 2);
      }
      const compactions = requests.flatMap((r, k) => (r.compaction ? [k] : []));
      if (!summaries) return expect(compactions).toHaveLength(0);
      expect(compactions.length).toBeGreaterThan(3);
      for (const k of compactions) {
        // The chat's own prompt plus the request for a summary, sent after the reply has gone out;
        // the next request starts with the new summary in place.
        expect(extends_(requests[k - 1] as RecordedRequest, requests[k] as RecordedRequest)).toBe(true);
        const answered = replied.filter((t) => t <= (requests[k]?.arrivedAt ?? 0)).length;
        expect(requests[k - 1]?.messages.findLast((m) => m.role === "user")?.content).toMatch(new RegExp(`^turn ${answered - 1}: `));
        expect(requests[k + 1]?.messages[0]?.content).toContain(FAKE_SUMMARY);
        expect(jumps).toContain(k + 1);
        // It asks for no more answer than a summary may take (a sixth of the budget), not a whole answer's
        // 1,024 tokens: prompt and answer fit the window also on a server that adds them up (vLLM refuses more).
        const predict = ((requests[k] as RecordedRequest).body.options as { num_predict: number }).num_predict;
        expect(predict).toBe(Math.floor(BUDGET / 6));
        expect(tokensOf(requests[k] as RecordedRequest) + predict).toBeLessThanOrEqual(CONTEXT);
      }
      // The summary grows at its end (the same bytes, then an addition) while the addition fits under its cap
      // (a sixth of the budget); when it would not, the model is asked to rewrite it whole, and it shrinks.
      const summaryOf = (k: number) => requests[k + 1]?.messages[0]?.content.slice(requests[0]?.messages[0]?.content.length) ?? "";
      let additions = 0;
      let rewrites = 0;
      for (let c = 1; c < compactions.length; c++) {
        const [before, after] = [summaryOf(compactions[c - 1] as number), summaryOf(compactions[c] as number)];
        const asked = requests[compactions[c] as number]?.messages.at(-1)?.content ?? "";
        expect(after.length).toBeLessThanOrEqual(Math.floor((BUDGET / 6) * 3.6) + 100);
        if (asked.includes(SUMMARY_ADDITION)) {
          expect(after.startsWith(before) && after.length > before.length).toBe(true);
          additions++;
        } else {
          expect(after.length).toBeLessThan(before.length);
          rewrites++;
        }
      }
      expect(additions).toBeGreaterThanOrEqual(2);
      expect(rewrites).toBeGreaterThanOrEqual(2);
    }, 60_000);
  }

  it("at 16k, a compaction's summary covers only the turns it replaces, not those kept word for word", async () => {
    await chat(true, 16384, 110);
    const requests = model.requests;
    const base = requests[0]?.messages[0]?.content ?? "";
    const compactions = requests.flatMap((r, k) => (r.compaction ? [k] : []));
    let keptBeside = 0;
    for (const k of compactions) {
      const next = requests[k + 1] as RecordedRequest;
      const summary = next.messages[0]?.content.slice(base.length) ?? "";
      expect(summary).toContain(FAKE_SUMMARY);
      const kept = next.messages.slice(1, -1).flatMap((m) => (m.role === "user" ? [m.content.match(/^turn (\d+):/)?.[1]] : []));
      keptBeside += kept.length;
      for (const n of kept) expect(summary).not.toContain(`turn ${n}:`);
      // The request names where the summary stops: the first turn kept, as the model sees it above.
      const ask = requests[k]?.messages.at(-1)?.content ?? "";
      if (kept.length) expect(ask).toContain(`${SUMMARY_STOPS} "turn ${kept[0]}: point ${kept[0]} of`);
      else expect(ask).not.toContain(SUMMARY_STOPS);
    }
    expect(compactions.length).toBeGreaterThanOrEqual(2);
    expect(keptBeside).toBeGreaterThan(0);
  }, 60_000);
});

describe("a window of more than 400 messages", () => {
  let model: FakeModel;
  let hermes: Awaited<ReturnType<typeof startInProcess>> | undefined;
  beforeEach(async () => {
    model = await startFakeModel();
  });
  afterEach(async () => {
    await hermes?.close();
    hermes = undefined;
    await model.close();
  });

  it("a chat of short messages that fits the window keeps every turn and its prefix past 400 stored messages", async () => {
    hermes = await startInProcess(baseSettings(model.url), []);
    model.respond((req) => ({ text: `ok ${req.messages.at(-1)?.content.split(" ")[0]}` }));
    for (let i = 0; i < 320; i++) expect((await hermes.ask(`m${i} hi`, "cli:short")).stopReason).toBe("done");
    const requests = model.requests;
    // 640 short messages are about two thirds of the default window: nothing is dropped or summarised.
    expect(requests.some((r) => r.compaction)).toBe(false);
    expect(jumpsIn(requests)).toEqual([]);
    expect(requests.at(-1)?.messages[1]?.content).toMatch(/^m0 hi/);
  }, 60_000);

  it("every request of a run with more than 400 messages carries the run's own message", async () => {
    const ping = defineTool({
      name: "ping",
      description: "answers pong",
      input: z.strictObject({ n: z.number() }),
      readOnly: true,
      run: ({ n }) => `pong ${n}`,
    });
    hermes = await startInProcess({ ...baseSettings(model.url), agent: { max_steps: 30 } }, [ping]);
    let step = 0;
    model.respond(() =>
      ++step > 22
        ? { text: "all done" }
        : { toolCalls: Array.from({ length: 20 }, (_, k) => ({ name: "ping", arguments: { n: step * 100 + k } })) },
    );
    expect((await hermes.ask("ping everything", "cli:many")).reply).toBe("all done");
    const chats = model.requests.filter((r) => !r.compaction);
    expect(chats).toHaveLength(23);
    expect(chats.at(-1)?.messages.length).toBeGreaterThan(400);
    for (const r of chats) expect(r.messages[1]?.content).toMatch(/^ping everything/);
  }, 60_000);
});
