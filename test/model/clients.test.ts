import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { modelErrorReply } from "../../src/agent/loop.js";
import { configSchema } from "../../src/config/schema.js";
import { networkError } from "../../src/model/http-errors.js";
import { createOllamaClient } from "../../src/model/ollama.js";
import { createOpenAIClient } from "../../src/model/openai.js";
import type { ModelRequest } from "../../src/model/types.js";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";

const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] };
const modelConfig = (base_url: string, extra: Record<string, unknown> = {}) =>
  configSchema().parse({ model: { base_url, retries: 2, retry_base_ms: 5, ...extra } }).model;

describe("model clients against the fake server", () => {
  let fake: FakeModel;
  beforeEach(async () => {
    fake = await startFakeModel();
  });
  afterEach(() => fake.close());

  it("openai: accumulates parallel calls by id even when an old server sends them all with index 0", async () => {
    fake.script({
      zeroIndex: true,
      finishReason: "stop",
      toolCalls: [
        { name: "clock", arguments: { timezone: "UTC" }, id: "a" },
        { name: "notes", arguments: { action: "list" }, id: "b" },
      ],
    });
    const result = await createOpenAIClient(modelConfig(fake.openaiUrl)).chat(request);
    expect(result.ok && result.toolCalls).toEqual([
      { id: "a", name: "clock", args: { timezone: "UTC" } },
      { id: "b", name: "notes", args: { action: "list" } },
    ]);
  });

  it("openai: speaks plain JSON when streaming is off", async () => {
    fake.script({ text: "plain", toolCalls: [{ name: "clock", arguments: {} }] });
    const result = await createOpenAIClient(modelConfig(fake.openaiUrl), { stream: false }).chat(request);
    expect(result.ok && result.text).toBe("plain");
    expect(result.ok && result.toolCalls[0]?.name).toBe("clock");
    expect(fake.requests[0]?.body.stream).toBe(false);
  });

  it("returns malformed arguments as a parse error on the call, not a failure", async () => {
    fake.script({ toolCalls: [{ name: "clock", arguments: '{"timezone": "UTC"' }] });
    const result = await createOpenAIClient(modelConfig(fake.openaiUrl)).chat(request);
    expect(result.ok && result.toolCalls[0]?.parseError).toMatch(/not valid JSON/);
  });

  it("ollama: streams text pieces and reports usage; sends num_ctx and keep_alive", async () => {
    fake.script({ text: "streamed reply", promptTokens: 321 });
    const pieces: string[] = [];
    const result = await createOllamaClient(modelConfig(fake.url)).chat(request, { onText: (d) => pieces.push(d) });
    expect(pieces.join("")).toBe("streamed reply");
    expect(pieces.length).toBeGreaterThan(1);
    expect(result.ok && result.usage.promptTokens).toBe(321);
    expect(fake.requests[0]?.body).toMatchObject({ keep_alive: "30m", options: { num_ctx: 16384, num_predict: 1024 } });
  });

  it("asks for a request's own smaller answer limit (a summary's), never for more than max_output_tokens", async () => {
    const summary: ModelRequest = { ...request, maxOutputTokens: 300 };
    await createOllamaClient(modelConfig(fake.url)).chat(summary);
    await createOpenAIClient(modelConfig(fake.openaiUrl)).chat(summary);
    await createOpenAIClient(modelConfig(fake.openaiUrl)).chat({ ...request, maxOutputTokens: 5000 });
    expect(
      fake.requests.map((r) => (r.api === "ollama" ? (r.body.options as { num_predict: number }).num_predict : r.body.max_tokens)),
    ).toEqual([300, 300, 1024]);
  });

  it("ollama: says the model is free as soon as the answer has ended, before handing up the result; never for a broken answer", async () => {
    const client = createOllamaClient(modelConfig(fake.url));
    const log: string[] = [];
    fake.script({ text: "all of it" });
    const result = await client.chat(request, { onAnswered: () => log.push("answered") });
    log.push(`result: ${result.ok && result.text}`);
    expect(log).toEqual(["answered", "result: all of it"]);
    log.length = 0;
    fake.script({ text: "half", drop: true }, { text: "half", drop: true }, { text: "half", hangAfterText: true });
    const broken = await createOllamaClient(modelConfig(fake.url, { timeout_s: 0.3 })).chat(request, {
      onAnswered: () => log.push("answered"),
    });
    expect(broken.ok).toBe(false);
    expect(log).toEqual([]);
  });

  it("ollama: a prepared call sends the request as it was when prepared, once per call", async () => {
    const messages: ModelRequest["messages"] = [{ role: "user", content: "first" }];
    const send = createOllamaClient(modelConfig(fake.url)).prepare({ messages, tools: [] });
    messages.push({ role: "user", content: "added after" });
    fake.script({ text: "one" }, { text: "two" });
    const first = await send();
    const second = await send();
    expect([first.ok && first.text, second.ok && second.text]).toEqual(["one", "two"]);
    expect(fake.requests.map((r) => r.messages.map((m) => m.content))).toEqual([["first"], ["first"]]);
  });

  for (const provider of ["ollama", "openai"] as const) {
    const client = (url: string, extra = {}) =>
      provider === "ollama" ? createOllamaClient(modelConfig(url, extra)) : createOpenAIClient(modelConfig(`${url}/v1`, extra));

    it(`${provider}: a dropped connection is a failure result, never a throw`, async () => {
      fake.script({ text: "partial text here", drop: true }, { text: "partial text here", drop: true }, { text: "again", drop: true });
      const result = await client(fake.url).chat(request);
      expect(result.ok).toBe(false);
    });

    it(`${provider}: a hung request is aborted by the signal`, async () => {
      fake.script({ hang: true });
      const controller = new AbortController();
      const pending = client(fake.url).chat(request, { signal: controller.signal });
      await fake.waitForRequests(1);
      controller.abort();
      const result = await pending;
      expect(!result.ok && result.error.kind).toBe("aborted");
    });

    it(`${provider}: a call whose run was cancelled before it went out sends nothing`, async () => {
      const result = await client(fake.url).chat(request, { signal: AbortSignal.abort() });
      expect(!result.ok && result.error.kind).toBe("aborted");
      expect(fake.requests).toHaveLength(0);
    });

    it(`${provider}: a hung request times out`, async () => {
      fake.script({ hang: true });
      const result = await client(fake.url, { timeout_s: 0.3, retries: 0 }).chat(request);
      expect(!result.ok && result.error.kind).toBe("timeout");
    });

    it(`${provider}: a 400 is not retried`, async () => {
      fake.script({ status: 400 });
      const result = await client(fake.url).chat(request);
      expect(!result.ok && result.error.status).toBe(400);
      expect(fake.requests).toHaveLength(1);
    });
  }
});

describe("an answer that is not a valid one is reported as such, never as an unreachable model", () => {
  let fake: FakeModel;
  beforeEach(async () => {
    fake = await startFakeModel();
  });
  afterEach(() => fake.close());

  const ndjson = (...lines: unknown[]) => lines.map((l) => `${JSON.stringify(l)}\n`).join("");
  const ollamaMessage = (message: unknown) => ndjson({ message, done: false }, { message: { content: "" }, done: true });
  const sse = (...chunks: string[]) => chunks.map((c) => `data: ${c}\n\n`).join("");
  const sseDelta = (delta: unknown) =>
    sse(
      JSON.stringify({ choices: [{ index: 0, delta, finish_reason: null }] }),
      JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
      "[DONE]",
    );
  const json = (message: unknown) => JSON.stringify({ choices: [{ index: 0, message, finish_reason: "stop" }] });

  const cases: { name: string; client: "ollama" | "openai" | "openai-json"; raw: string; says: RegExp }[] = [
    { name: "a line that is null", client: "ollama", raw: "null\n", says: /not a JSON object: null/ },
    {
      name: "tool_calls as an object",
      client: "ollama",
      raw: ollamaMessage({ content: "", tool_calls: { function: { name: "clock" } } }),
      says: /tool_calls/,
    },
    { name: "tool_calls of null", client: "ollama", raw: ollamaMessage({ content: "", tool_calls: [null] }), says: /tool_calls/ },
    { name: "content that is a number", client: "ollama", raw: ollamaMessage({ content: 123 }), says: /content that is not text/ },
    { name: "content that is an object", client: "ollama", raw: ollamaMessage({ content: {} }), says: /content that is not text/ },
    { name: "content that is a list", client: "ollama", raw: ollamaMessage({ content: ["a", "b"] }), says: /content that is not text/ },
    { name: "a chunk that is not JSON", client: "openai", raw: "data: {nope\n\n", says: /text that is not JSON/ },
    {
      name: "an error event",
      client: "openai",
      raw: 'event: error\ndata: {"error": {"message": "the GPU fell over"}}\n\n',
      says: /the GPU fell over/,
    },
    { name: "a chunk that is null", client: "openai", raw: sse("null", "[DONE]"), says: /not a JSON object: null/ },
    { name: "streamed content that is a number", client: "openai", raw: sseDelta({ content: 123 }), says: /content that is not text: 123/ },
    { name: "streamed content that is a list", client: "openai", raw: sseDelta({ content: ["a", "b"] }), says: /content that is not text/ },
    { name: "streamed tool_calls as an object", client: "openai", raw: sseDelta({ tool_calls: { index: 0 } }), says: /tool_calls/ },
    { name: "an answer that is not JSON", client: "openai-json", raw: "{nope", says: /text that is not JSON/ },
    {
      name: "content that is an object",
      client: "openai-json",
      raw: json({ role: "assistant", content: {} }),
      says: /content that is not text/,
    },
  ];

  for (const c of cases) {
    it(`${c.client}: ${c.name}`, async () => {
      fake.script({ raw: c.raw });
      const client =
        c.client === "ollama"
          ? createOllamaClient(modelConfig(fake.url))
          : createOpenAIClient(modelConfig(fake.openaiUrl), { stream: c.client === "openai" });
      const result = await client.chat(request);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error.kind).toBe("bad_response");
      expect(result.error.message).toMatch(c.says);
      expect(modelErrorReply(result.error)).not.toMatch(/unreachable|systemctl/);
      // Not a network failure: one request, no retries.
      expect(fake.requests).toHaveLength(1);
    });
  }
});

describe("openai: a 200 to a streamed request that is not an event stream", () => {
  let fake: FakeModel;
  beforeEach(async () => {
    fake = await startFakeModel();
  });
  afterEach(() => fake.close());
  const KEY = "sk-test-key-never-shown";
  const client = () => createOpenAIClient(modelConfig(fake.openaiUrl, { provider: "openai", api_key: KEY }));

  it("a plain JSON completion from a server that ignores stream: true is the answer", async () => {
    fake.script({
      raw: JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content: "plain" }, finish_reason: "stop" }] }),
      contentType: "application/json",
    });
    const pieces: string[] = [];
    const result = await client().chat(request, { onText: (d) => pieces.push(d) });
    expect(result.ok && result.text).toBe("plain");
    expect(pieces.join("")).toBe("plain");
    expect(fake.requests[0]?.body.stream).toBe(true);
  });

  it("an event stream from a server that names no content type is read as one", async () => {
    const chunk = {
      id: "c",
      object: "chat.completion.chunk",
      created: 0,
      model: "m",
      choices: [{ index: 0, delta: { content: "streamed" }, finish_reason: "stop" }],
    };
    fake.script({ raw: `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`, contentType: "" });
    const result = await client().chat(request);
    expect(result.ok && result.text).toBe("streamed");
  });

  const pages = [
    {
      name: "a login page from a proxy",
      raw: `<!doctype html><html><body>Please log in (key ${KEY})</body></html>`,
      contentType: "text/html; charset=utf-8",
      says: /did not send an event stream \(text\/html: <!doctype html><html><body>Please log in \(key \*+\)/,
    },
    {
      name: "JSON that is not a completion",
      raw: '{"detail": "Not Found"}',
      contentType: "application/json",
      says: /did not send an event stream \(application\/json: \{"detail": "Not Found"\}\)/,
    },
    {
      name: "an event stream without a single event",
      raw: "<html>Please log in</html>",
      contentType: "text/event-stream",
      says: /did not send an event stream \(text\/event-stream without a single event\)/,
    },
  ];
  for (const page of pages) {
    it(`${page.name} is an error that says the endpoint sent no event stream (and what it sent), never the key; not retried`, async () => {
      fake.script({ raw: page.raw, contentType: page.contentType });
      const result = await client().chat(request);
      expect(!result.ok && result.error.kind).toBe("bad_response");
      if (result.ok) return;
      expect(result.error.message).toMatch(page.says);
      expect(result.error.message).not.toContain(KEY);
      expect(result.error.fix).toMatch(/base_url/);
      expect(fake.requests).toHaveLength(1);
    });
  }
});

describe("a failed request, by what failed", () => {
  const kind = (err: unknown) => networkError(err, "http://model", undefined, () => false).kind;

  it("is the network's with a system error code, a timeout when a signal of its own gave up, else a bad answer", () => {
    expect(kind(Object.assign(new Error("connect refused"), { code: "ECONNREFUSED" }))).toBe("unreachable");
    expect(kind(new TypeError("fetch failed", { cause: Object.assign(new Error("reset"), { code: "ECONNRESET" }) }))).toBe("http");
    expect(kind(new DOMException("The operation was aborted due to timeout", "TimeoutError"))).toBe("timeout");
    expect(kind(new DOMException("This operation was aborted", "AbortError"))).toBe("timeout");
    expect(kind(new TypeError("Cannot read properties of null (reading 'error')"))).toBe("bad_response");
    expect(kind(new SyntaxError("Unexpected token"))).toBe("bad_response");
  });
});

const sseOf = (chunks: unknown[]) =>
  `${chunks.map((c) => `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 0, model: "m", ...(c as object) })}\n\n`).join("")}data: [DONE]\n\n`;
const delta = (d: unknown, finish: string | null = null) => ({ choices: [{ index: 0, delta: d, finish_reason: finish }] });

/** Found by a review of the model clients: each failed before its fix. */
describe("model clients: parallel calls without ids, long and unstreamed answers, a wrong Ollama URL", () => {
  let fake: FakeModel;
  beforeEach(async () => {
    fake = await startFakeModel();
  });
  afterEach(() => fake.close());

  it("openai stream: two parallel calls from a server that sends no call ids come back as two calls", async () => {
    fake.script({
      raw: sseOf([
        delta({ role: "assistant", content: "" }),
        delta({ tool_calls: [{ index: 0, type: "function", function: { name: "clock", arguments: '{"timezone":' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '"UTC"}' } }] }),
        delta({ tool_calls: [{ index: 1, type: "function", function: { name: "notes", arguments: '{"action":' } }] }),
        delta({ tool_calls: [{ index: 1, function: { arguments: '"list"}' } }] }),
        delta({}, "tool_calls"),
      ]),
    });
    const result = await createOpenAIClient(modelConfig(fake.openaiUrl)).chat(request);
    expect(result.ok && result.toolCalls.map((c) => ({ name: c.name, args: c.args }))).toEqual([
      { name: "clock", args: { timezone: "UTC" } },
      { name: "notes", args: { action: "list" } },
    ]);
  });

  it("openai with stream: false: an answer that takes longer than first_byte_timeout_s (but within timeout_s) is not a timeout", async () => {
    // A non-streamed completion arrives whole, when the model has finished: its "first byte" is its last.
    fake.script({ text: "a long answer", delayMs: 600 });
    const client = createOpenAIClient(modelConfig(fake.openaiUrl, { first_byte_timeout_s: 0.3, timeout_s: 10 }), { stream: false });
    const result = await client.chat(request);
    expect(result.ok ? result.text : result.error.message).toBe("a long answer");
  });

  it("ollama: a long reply (12,000 tokens, 48,000 characters of text) is not cut off as passing 1,000,000 characters", async () => {
    // Ollama streams one NDJSON line of ~100 bytes per token; the limit is meant for the reply's text.
    fake.script({ textPieces: Array.from({ length: 12_000 }, () => " tok") });
    const client = createOllamaClient(modelConfig(fake.url, { max_output_tokens: 16_000, context_tokens: 32_768 }));
    const result = await client.chat(request);
    expect(result.ok ? result.text.length : result.error.message).toBe(48_000);
  });

  it("ollama: a base_url that ends in /v1 is not reported as 'model not pulled'", async () => {
    // Ollama's router answers an unknown path (here /v1/api/chat) with a plain "404 page not found".
    const client = createOllamaClient(modelConfig(`${fake.url}/v1`));
    const result = await client.chat(request);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.message).not.toMatch(/ollama pull/);
  });
});
