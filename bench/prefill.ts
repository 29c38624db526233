// The prefill figure: over a long chat, how much of each prompt a model with a one-slot prefix cache
// (llama.cpp, Ollama) must read anew. Every request hermes sends is recorded by the fake model and laid
// out as a chat template would (tools, then each message's role, text and calls); the part beyond the
// longest prefix it shares with the request before it (a summary request included: on a one-slot server
// it evicts the chat) is what the model prefills again.
import { SUMMARY_ADDITION } from "../src/agent/compact-idle.js";
import { DEFAULT_TOOLS } from "../src/config/schema.js";
import { type RecordedRequest, startFakeModel } from "../test/fakes/model-server.js";
import { baseSettings } from "../test/helpers/hermes.js";
import { startInProcess } from "../test/helpers/in-process.js";
import { median, round } from "./stats.js";

/** What `record` in bench/run.ts takes. */
export interface PrefillFigure {
  name: string;
  value: number;
  unit: string;
  target?: { op: "<=" | ">="; value: number };
  note?: string;
}

const TURNS = 60;
/** A clock call every sixth turn, as a chat that asks the time now and then. */
const CLOCK_EVERY = 6;
/** Targets: the share of prompt text new to the cache, and near-full re-reads per ten turns. */
export const NEW_SHARE_TARGET = 12;
export const REREADS_PER_TEN_TURNS = 1;

type Message = RecordedRequest["messages"][number];
const render = (m: Message) => `\n<${m.role}>${m.content}${m.tool_calls ? JSON.stringify(m.tool_calls) : ""}</${m.role}>`;

/** A request as the model's chat template lays it out. */
export function templateText(r: RecordedRequest): string {
  return JSON.stringify(r.tools ?? []) + r.messages.map(render).join("");
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

export interface CacheUse {
  requests: number;
  summaryRequests: number;
  /** Summary requests that do not extend the chat's prompt (a transcript in requests of their own): evictions. */
  evictingSummaryRequests: number;
  /**
   * Characters of a rewritten summary the request after the rewrite shared with the one before it. The fake
   * model's rewrite begins with the summary before it; a model's would be new text.
   */
  summaryReused: number;
  totalChars: number;
  /** Characters beyond the common prefix with the previous request, per request. */
  newChars: number[];
  /** Requests that reuse less than a quarter of the previous request's text. */
  rereads: number;
  /** Characters beyond the prefix of what the server holds: the previous request and the answer it generated. */
  newAfterReply: number;
}

const SUMMARY_HEADING = "Summary of the earlier conversation";

/** Where the summary in a request's system prompt lies in its template text, if it has one. */
function summarySpan(r: RecordedRequest): { start: number; end: number } | undefined {
  const system = r.messages[0];
  const at = system?.role === "system" ? system.content.indexOf(SUMMARY_HEADING) : -1;
  if (!system || at < 0) return undefined;
  const start = JSON.stringify(r.tools ?? []).length + "\n<system>".length + at;
  return { start, end: start + system.content.length - at };
}

/**
 * How a one-slot prefix cache fares over these requests, in the order they were sent. A summary request
 * is a request like any other: one that extends the chat's prompt costs its new tail; one on its own
 * shares nothing with the chat, so it and the chat request after it are read whole (an eviction).
 */
export function cacheUse(requests: RecordedRequest[]): CacheUse {
  let previous = "";
  const newChars: number[] = [];
  let totalChars = 0;
  let rereads = 0;
  let newAfterReply = 0;
  let summaryReused = 0;
  let evictingSummaryRequests = 0;
  let last: RecordedRequest | undefined;
  for (const r of requests) {
    const text = templateText(r);
    const shared = commonPrefix(previous, text);
    if (r.compaction && last && shared < templateText(last).length) evictingSummaryRequests++;
    // After a rewrite (not an addition at the summary's end) the model's new summary is new text.
    const rewrote = last?.compaction && !String(last.messages.at(-1)?.content).includes(SUMMARY_ADDITION);
    const span = rewrote && !r.compaction ? summarySpan(r) : undefined;
    if (span && shared > span.start) summaryReused += Math.min(shared, span.end) - span.start;
    // The answer is in the server's cache as it generated it: as the next request carries it, when it does.
    const answer = last && r.messages[last.messages.length];
    const held = answer?.role === "assistant" ? previous + render(answer) : previous;
    newAfterReply += text.length - commonPrefix(held, text);
    last = r;
    newChars.push(text.length - shared);
    totalChars += text.length;
    if (previous && shared < previous.length / 4) rereads++;
    previous = text;
  }
  const summaryRequests = requests.filter((r) => r.compaction).length;
  return {
    requests: requests.length,
    summaryRequests,
    evictingSummaryRequests,
    summaryReused,
    totalChars,
    newChars,
    rereads,
    newAfterReply,
  };
}

/** The user's message of turn `i`: about 150 tokens, a different text each turn. */
const userText = (i: number) =>
  `turn ${i}: ${Array.from({ length: 12 }, (_, k) => `point ${k} of message ${i} with some words`).join(", ")}.`;
const replyText = (n: string) => `Answer ${n}: ${Array.from({ length: 14 }, (_, k) => `part ${k} of the reply to ${n}`).join("; ")}.`;

/** A 60-turn chat at `contextTokens`: every request recorded, and the index of each turn's first one. */
async function chat(contextTokens: number, summaries: boolean): Promise<{ requests: RecordedRequest[]; turnStarts: number[] }> {
  const model = await startFakeModel();
  model.respond((req) => {
    const last = req.messages.at(-1);
    const n = req.messages.findLast((m) => m.role === "user")?.content.match(/^turn (\d+)/)?.[1] ?? "?";
    if (last?.role === "user" && Number(n) % CLOCK_EVERY === CLOCK_EVERY - 1) return { toolCalls: [{ name: "clock", arguments: {} }] };
    return { text: replyText(n) };
  });
  const settings = baseSettings(model.url);
  const hermes = await startInProcess(
    {
      ...settings,
      model: { ...(settings.model as object), context_tokens: contextTokens },
      tools: { enabled: [...DEFAULT_TOOLS] },
      context: { summaries },
    },
    [],
  );
  try {
    const turnStarts: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      turnStarts.push(model.requests.length);
      await hermes.ask(userText(i), "cli:prefill");
    }
    return { requests: [...model.requests], turnStarts };
  } finally {
    await hermes.close();
    await model.close();
  }
}

/** The prefill figures of a 60-turn chat at 4k and 16k, with summaries on and off. */
export async function prefill(record: (f: PrefillFigure) => void): Promise<void> {
  for (const contextTokens of [4096, 16384]) {
    for (const summaries of [true, false]) {
      const { requests, turnStarts } = await chat(contextTokens, summaries);
      const use = cacheUse(requests);
      // A turn's share: its own requests, and a summary request made after its reply.
      const perTurn = turnStarts.map((start, k) => use.newChars.slice(start, turnStarts[k + 1]).reduce((a, b) => a + b, 0));
      const fresh = use.newChars.reduce((a, b) => a + b, 0);
      const label = `${contextTokens / 1024}k, summaries ${summaries ? "on" : "off"}`;
      record({
        name: `prefill ${label}: prompt text`,
        value: use.totalChars,
        unit: "chars",
        note: `${use.requests} requests, ${use.summaryRequests} of them summary requests (${use.evictingSummaryRequests} on their own, each an eviction)`,
      });
      record({ name: "  … beyond the prefix of the previous request", value: fresh, unit: "chars" });
      record({
        name: "  … share new to the cache",
        value: round((fresh / use.totalChars) * 100, 1),
        unit: "%",
        target: { op: "<=", value: NEW_SHARE_TARGET },
      });
      record({
        name: "  … share new, the answers counted as cached",
        value: round((use.newAfterReply / use.totalChars) * 100, 1),
        unit: "%",
        note: "llama.cpp and Ollama keep the tokens they generated",
      });
      if (summaries)
        record({
          name: "  … share new, each rewritten summary read whole",
          value: round(((fresh + use.summaryReused) / use.totalChars) * 100, 1),
          unit: "%",
          note: "the fake model's rewrite begins with the summary before it; a model's would not",
        });
      record({ name: "  … new per turn, median", value: median(perTurn), unit: "chars" });
      record({
        name: "  … near-full re-reads (< ¼ of the previous reused)",
        value: use.rereads,
        unit: "reqs",
        target: { op: "<=", value: (TURNS / 10) * REREADS_PER_TEN_TURNS },
      });
    }
  }
}
