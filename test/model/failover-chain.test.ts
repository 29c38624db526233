/**
 * The failover chain on its own: a primary behind a proxy whose backend is down (every path answers 502) was
 * taken back at every probe, and each message then waited through its retries and told the chat again; and
 * after a restart, the daily_tokens of a fallback on the primary's base URL (two models of one provider) was
 * charged with what the primary's model had used. Its health probe asked the endpoints in turn (a hung primary
 * used the whole deadline), then waited for every one (a hung fallback held it), and without a caller's signal
 * could wait for ever.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/schema.js";
import { createModelClient } from "../../src/model/create.js";
import { createModelChain } from "../../src/model/failover.js";
import type { ModelClient, ModelRequest, ModelResult } from "../../src/model/types.js";
import { openStore } from "../../src/store/store.js";
import { startFakeModel } from "../fakes/model-server.js";
import { useInProcess } from "../helpers/fixture.js";
import { createTempDir } from "../helpers/hermes.js";
import { waitFor } from "../helpers/wait.js";

const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [], estimatedTokens: 10 };
const endpoint = (extra: Record<string, unknown>) => configSchema().parse({ model: { retries: 1, retry_base_ms: 1, ...extra } }).model;
const silent = pino({ level: "silent" });

describe("the failover chain", () => {
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it("does not take back a primary whose every path answers 502 (a proxy in front of a dead server)", async () => {
    let probes = 0;
    const proxy = createServer((req, res) => {
      if (req.method === "GET") probes++;
      res.writeHead(502, { "content-type": "text/html" }).end("<html>502 Bad Gateway</html>");
    });
    proxy.listen(0, "127.0.0.1");
    await once(proxy, "listening");
    closers.push(() => proxy.close());
    const fallback = await startFakeModel();
    closers.push(() => fallback.close());
    fallback.models = ["small-model"];
    fallback.respond(() => ({ text: "from the fallback" }));

    for (const provider of ["ollama", "openai"] as const) {
      const base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${provider === "openai" ? "/v1" : ""}`;
      const primary = await createModelClient(endpoint({ provider, base_url: base }));
      const second = await createModelClient(endpoint({ provider: "openai", base_url: fallback.openaiUrl, name: "small-model" }));
      const chain = createModelChain(
        [
          { client: primary, dailyTokens: 0 },
          { client: second, dailyTokens: 0 },
        ],
        { retryPrimaryAfterMs: 20, usedToday: () => 0, log: silent },
      );
      closers.push(() => chain.stop());
      const notices: string[] = [];
      const first = await chain.chat(request, { onNotice: (t) => notices.push(t) });
      expect(first.ok && first.text).toBe("from the fallback");
      // Several probes of the primary, each answered 502.
      const seen = probes;
      await waitFor(() => probes >= seen + 3, { message: `three probes of the ${provider} primary` });
      expect(chain.serving(), provider).toMatchObject({ primary: false });
      await chain.chat(request, { onNotice: (t) => notices.push(t) });
      expect(notices, provider).toHaveLength(1); // told once: the primary never came back
      chain.stop();
    }
  });

  /** A server that takes a request and never answers: a host that drops packets, a machine that is off. */
  const hungServer = async () => {
    const hung = createServer(() => undefined);
    hung.listen(0, "127.0.0.1");
    await once(hung, "listening");
    closers.push(() => hung.closeAllConnections());
    closers.push(() => hung.close());
    return `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
  };
  /** A chain of two endpoints, the primary and one fallback, as their settings say. */
  const chainOf = async (primary: Record<string, unknown>, fallback: Record<string, unknown>) => {
    const chain = createModelChain(
      [
        { client: await createModelClient(endpoint(primary)), dailyTokens: 0 },
        { client: await createModelClient(endpoint(fallback)), dailyTokens: 0 },
      ],
      { retryPrimaryAfterMs: 60_000, usedToday: () => 0, log: silent },
    );
    closers.push(() => chain.stop());
    return chain;
  };
  const readyServer = async (name: string) => {
    const server = await startFakeModel();
    closers.push(() => server.close());
    server.models = [name];
    return server;
  };

  it("reports a working fallback as ready while the primary hangs, within the one deadline of the health probe", async () => {
    const fallback = await readyServer("small-model");
    const chain = await chainOf(
      { provider: "ollama", base_url: await hungServer() },
      { provider: "openai", base_url: fallback.openaiUrl, name: "small-model" },
    );
    const probe = await chain.probe(AbortSignal.timeout(1000));
    expect(probe).toMatchObject({ reachable: true, detail: expect.stringMatching(/a fallback \(the serving endpoint is not ready\)$/) });
  });

  it("without a signal of the caller's, gives up on a primary that hangs after the clients' own 5 s", async () => {
    const fallback = await readyServer("small-model");
    const chain = await chainOf(
      { provider: "ollama", base_url: await hungServer() },
      { provider: "openai", base_url: fallback.openaiUrl, name: "small-model" },
    );
    const probe = await chain.probe(); // each client alone answers within 5 s
    expect(probe).toMatchObject({ reachable: true, detail: expect.stringMatching(/a fallback/) });
  }, 12_000);

  it("answers as soon as a ready primary answers, without waiting for a fallback that hangs", async () => {
    const primary = await readyServer("big-model");
    const chain = await chainOf(
      { provider: "openai", base_url: primary.openaiUrl, name: "big-model" },
      { provider: "ollama", base_url: await hungServer() },
    );
    // A deadline far beyond the test's own time limit: only a probe that does not wait for the fallback ends in time.
    const probe = await chain.probe(AbortSignal.timeout(120_000));
    expect(probe).toMatchObject({ reachable: true, detail: "model big-model is available" });
  }, 10_000);

  it("charges a fallback's daily_tokens with its own model's use only, also when it shares the primary's base URL", async () => {
    const server = await startFakeModel();
    closers.push(() => server.close());
    server.models = ["big-model", "small-model"];
    const dir = createTempDir();
    closers.push(dir.cleanup);
    // Earlier today, before a restart: the primary's model used 90,000 tokens, the fallback's none.
    const path = join(dir.path, "hermes.db");
    const store = openStore(path);
    store.usage.record({
      ...{ runId: null, sessionId: null, step: null, cachedTokens: null, estimated: false, firstByteMs: 10, totalMs: 100 },
      ...{ endpoint: server.openaiUrl, model: "big-model", promptTokens: 80_000, outputTokens: 10_000, outcome: "ok" },
    });
    store.close();
    const openai = { provider: "openai", base_url: server.openaiUrl, retries: 0, retry_base_ms: 1 };
    const hermes = await useInProcess({
      timezone: "Europe/Berlin",
      model: { ...openai, name: "big-model", fallbacks: [{ ...openai, name: "small-model", daily_tokens: 50_000 }] },
      storage: { path },
      tools: { enabled: ["clock"] },
      connectors: { cli: { enabled: false }, cron: { enabled: false } },
    });
    server.script({ status: 503 }, { text: "from the small model" });
    expect((await hermes.ask("hello")).reply).toMatch(/from the small model$/);
  });
  it("charges the day's use with an answer's estimated tokens when its endpoint reports none, as the ledger does", async () => {
    // An endpoint that reports its prompt tokens but not its answer's (some OpenAI-compatible servers).
    const answer = "x".repeat(3600); // 1,000 tokens at 3.6 characters a token
    let calls = 0;
    const fake = (name: string): ModelClient => {
      const prepare = () => async (): Promise<ModelResult> => {
        if (name === "primary") calls++;
        return {
          ok: true,
          text: name === "primary" ? answer : "from the fallback",
          toolCalls: [],
          usage: { promptTokens: 10 },
          finishReason: "stop",
        };
      };
      return {
        provider: "openai",
        baseUrl: `http://${name}.test/v1`,
        modelName: name,
        prepare,
        chat: () => prepare()(),
        probe: async () => ({ reachable: true, detail: "" }),
      };
    };
    const chain = createModelChain(
      [
        { client: fake("primary"), dailyTokens: 500 },
        { client: fake("fallback"), dailyTokens: 0 },
      ],
      { retryPrimaryAfterMs: 60_000, usedToday: () => 0, log: silent },
    );
    closers.push(() => chain.stop());
    const first = await chain.chat(request);
    expect(first.ok && first.text.length).toBe(answer.length);
    // 10 + 1,000 tokens: past the primary's 500 a day, the next call goes to the fallback.
    const second = await chain.chat(request);
    expect(second.ok && second.text).toBe("from the fallback");
    expect(calls).toBe(1);
  });
});
