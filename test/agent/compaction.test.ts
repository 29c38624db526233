import { beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { COMPACTION_MARKER } from "../../src/agent/compaction.js";
import { promptTokens } from "../../src/model/tokens.js";
import type { ChatMessage } from "../../src/model/types.js";
import { defineTool } from "../../src/tools/define.js";
import { FAKE_SUMMARY, type FakeModel, type RecordedRequest } from "../fakes/model-server.js";
import { useInProcess, useModel } from "../helpers/fixture.js";
import { baseSettings } from "../helpers/hermes.js";
import type { startInProcess } from "../helpers/in-process.js";

type Wire = RecordedRequest["messages"][number];

function asChat(messages: Wire[]): ChatMessage[] {
  return messages.map((m) => ({ role: m.role, content: m.content }) as ChatMessage);
}

const lastUser = (req: RecordedRequest) => req.messages.findLast((m) => m.role === "user")?.content ?? "";

/** A tool whose result is long and recognisable, to see whether it is pasted into summaries. */
const lookup = defineTool({
  name: "lookup",
  description: "test tool: a long result",
  input: z.strictObject({}),
  readOnly: true,
  run: () => `LOOKUP-RESULT ${"R".repeat(3000)}`,
});

describe("summaries of long chats", () => {
  let model: FakeModel;
  let hermes: Awaited<ReturnType<typeof startInProcess>> | undefined;
  /** The chat turn each model request belongs to. */
  let turnOf: number[];
  let turn: number;

  const start = async (model_: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const settings = baseSettings(model.url);
    hermes = await useInProcess({ ...settings, model: { ...(settings.model as object), ...model_ }, ...extra }, [lookup]);
    return hermes;
  };
  /** The model answers each turn by number (and calls `lookup` on turns ending in 3); every request is tagged with its turn. */
  const answerByTurn = (withLookups = true, answerChars = 200) =>
    model.respond((req) => {
      const last = req.messages.at(-1);
      const n = lastUser(req).match(/^turn (\d+)/)?.[1];
      if (last?.role === "user" && n?.endsWith("3")) return { toolCalls: [{ name: withLookups ? "lookup" : "clock", arguments: {} }] };
      return { text: `answer ${n} ${"a".repeat(answerChars)}` };
    });
  const chat = async (turns: number, session = "cli:long", text = (i: number) => `turn ${i} ${"w".repeat(250)}`) => {
    for (turn = 0; turn < turns; turn++) {
      const outcome = await hermes?.ask(text(turn), session);
      expect(outcome?.stopReason).toBe("done");
      expect(outcome?.reply).toMatch(new RegExp(`^answer ${turn} `));
    }
  };

  beforeEach(async () => {
    model = await useModel();
    turnOf = [];
    turn = 0;
    const push = model.requests.push.bind(model.requests);
    model.requests.push = (...items) => {
      for (const _ of items) turnOf.push(turn);
      return push(...items);
    };
  });

  it("keeps a 200-turn chat at context_tokens 8192 answering, every request fitting, summary present and newest turns verbatim", async () => {
    await start({ context_tokens: 8192, max_output_tokens: 1024 });
    answerByTurn();
    await chat(200, "cli:long", (i) =>
      i === 0 ? `turn 0 my locker code is 4711, keep it in mind ${"w".repeat(200)}` : `turn ${i} ${"w".repeat(250)}`,
    );
    const budget = 8192 - 1024;
    for (const req of model.requests) {
      const specs = req.tools.map((t) => t.function) as never;
      expect(promptTokens(asChat(req.messages), specs)).toBeLessThanOrEqual(budget);
    }
    const all = model.requests.map((r, i) => ({ r, i })).filter((x) => x.r.compaction);
    // Turns dropped by a jump (a turn larger than foreseen) are caught up with from a transcript: rare.
    const compactions = all.filter(({ r }) => r.tools.length > 0);
    for (const { r } of all.filter((x) => !compactions.includes(x))) {
      expect(r.messages[1]?.content).toContain("Result of lookup: LOOKUP-RESULT");
      expect(r.messages[1]?.content).not.toContain("R".repeat(400));
    }
    expect(all.length - compactions.length).toBeLessThanOrEqual(2);
    expect(compactions.length).toBeGreaterThanOrEqual(3);
    for (const { r, i } of compactions) {
      // Only when the budget needs it: the chat's prompt it extends was near the budget.
      const chat = r.messages.slice(0, -1);
      expect(promptTokens(asChat(chat), r.tools.map((t) => t.function) as never)).toBeGreaterThan(budget * 0.8);
      // The chat's own prompt, tools included, with the reply that went out and one more message asking for the summary.
      const previous = model.requests[i - 1] as RecordedRequest;
      expect(r.body.tools).toEqual(previous.body.tools);
      expect(chat.slice(0, previous.messages.length)).toEqual(previous.messages);
      expect(chat.at(-1)?.role).toBe("assistant");
      expect(r.messages.at(-1)?.content.startsWith(COMPACTION_MARKER)).toBe(true);
      // The next request starts with the new summary in place.
      expect(model.requests[i + 1]?.messages[0]?.content).toContain(FAKE_SUMMARY);
    }
    // A fact told in the first turn reaches the first compaction request, and the summaries carry it on.
    expect(compactions[0]?.r.messages[1]?.content).toContain("my locker code is 4711");
    const final = model.requests.at(-1) as RecordedRequest;
    expect(final.compaction).toBe(false);
    expect(final.messages[0]?.content).toContain(FAKE_SUMMARY);
    expect(final.messages[0]?.content).toContain("my locker code is 4711");
    const users = final.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users.at(-1)).toMatch(/^turn 199 w{250}\n\n\(Current time: /);
    expect(users.at(-2)).toMatch(/^turn 198 w{250}\n\n\(Current time: /);
    expect(final.messages.at(-2)?.content).toMatch(/^answer 198 a{200}$/);
    // After a compaction the prompt holds 40 % of the budget, and grows until the budget needs the next one.
    expect(users.length).toBeGreaterThan(3);
    // Compactions are model calls like any other: every request the model saw has its row in the usage ledger.
    expect(hermes?.daemon.core.store.usage.totals(0)[0]?.calls).toBe(model.requests.length);
  }, 120_000);

  it("keeps every request between two compactions a byte-identical prefix of the next", async () => {
    await start({ context_tokens: 8192, max_output_tokens: 1024 });
    answerByTurn(false, 80);
    await chat(200, "cli:long", (i) => `turn ${i} ${"w".repeat(80)}`);
    const starts = model.requests.flatMap((r, i) => (r.compaction ? [i] : []));
    expect(starts.length).toBeGreaterThanOrEqual(3);
    let pairs = 0;
    for (let k = 0; k + 1 < starts.length; k++) {
      const between = model.requests.slice((starts[k] as number) + 1, starts[k + 1]).filter((r) => !r.compaction);
      // The request a compaction was made for carries the new summary; every later one keeps its prefix.
      for (let i = 0; i + 1 < between.length; i++) {
        const [a, b] = [between[i], between[i + 1]].map((r) => JSON.stringify({ tools: r?.body.tools, messages: r?.messages })) as [
          string,
          string,
        ];
        expect(b.startsWith(a.slice(0, -2))).toBe(true);
        pairs++;
      }
      expect(between[0]?.messages[0]?.content).toContain(FAKE_SUMMARY);
    }
    expect(pairs).toBeGreaterThan(30);
  }, 120_000);

  it("answers every run when compactions fail, tries again only compact_every turns later, and drops turns instead", async () => {
    await start({ context_tokens: 2048, max_output_tokens: 256 }, { context: { compact_every: 5 }, tools: { enabled: ["clock"] } });
    answerByTurn();
    for (let i = 0; i < 20; i++) model.scriptCompaction({ status: 400 });
    await chat(40);
    const failed = model.requests.map((r, i) => ({ r, turn: turnOf[i] as number })).filter((x) => x.r.compaction);
    expect(failed.length).toBeGreaterThanOrEqual(2);
    for (let k = 1; k < failed.length; k++) expect((failed[k]?.turn ?? 0) - (failed[k - 1]?.turn ?? 0)).toBeGreaterThanOrEqual(5);
    const last = model.requests.at(-1) as RecordedRequest;
    expect(last.messages[0]?.content).not.toContain(FAKE_SUMMARY);
    expect(promptTokens(asChat(last.messages), last.tools.map((t) => t.function) as never)).toBeLessThanOrEqual(2048 - 256);
    expect(hermes?.daemon.core.store.summaries.latest(1)).toBeUndefined();
  }, 60_000);

  it("answers the run when a compaction times out (context.compact_timeout_s)", async () => {
    await start(
      { context_tokens: 2048, max_output_tokens: 256 },
      { context: { compact_every: 50, compact_timeout_s: 0.3 }, tools: { enabled: ["clock"] } },
    );
    answerByTurn();
    model.scriptCompaction({ hang: true });
    await chat(14);
    const hung = model.requests.findIndex((r) => r.compaction);
    expect(hung).toBeGreaterThan(0);
    // The turn the compaction was tried for was answered, by a request right after the hung one.
    expect(model.requests[hung + 1]?.compaction).toBe(false);
    expect(turnOf[hung + 1]).toBe(turnOf[hung]);
    expect(lastUser(model.requests[hung + 1] as RecordedRequest)).toMatch(new RegExp(`^turn ${turnOf[hung]} `));
    expect(model.requests.filter((r) => r.compaction)).toHaveLength(1);
  }, 60_000);

  it("compacts on /compact, shows the summary after the system prompt, and /new starts clean", async () => {
    const h = await start({});
    answerByTurn();
    await chat(3, "cli:c", (i) => `turn ${i} my name is Ada ${i}`);
    const forced = await h.daemon.core.compact("cli:c");
    expect(forced).toMatchObject({ ok: true });
    const compaction = model.requests.at(-1) as RecordedRequest;
    expect(compaction.compaction).toBe(true);
    expect(compaction.messages[1]?.content).toContain("User: turn 0 my name is Ada 0");
    expect(compaction.messages[1]?.content).not.toContain("turn 2");
    turn = 3;
    await h.ask("turn 3 next", "cli:c");
    const after = model.requests.at(-1) as RecordedRequest;
    expect(after.messages[0]?.content).toMatch(
      /Summary of the earlier conversation[^\n]*\n\[summary by the fake model\] turn 0 my name is Ada 0; turn 1/,
    );
    expect(after.messages.filter((m) => m.role === "user").map((m) => m.content.split("\n")[0])).toEqual([
      "turn 2 my name is Ada 2",
      "turn 3 next",
    ]);
    expect(await h.daemon.core.compact("cli:other")).toMatchObject({ ok: false });
    h.daemon.core.newSession("cli:c");
    await h.ask("turn 4 fresh", "cli:c");
    const fresh = model.requests.at(-1) as RecordedRequest;
    expect(fresh.messages[0]?.content).not.toContain("Summary of the earlier conversation");
    expect(fresh.messages).toHaveLength(2);
  });
});
