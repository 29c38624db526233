import { beforeEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/types.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import type { FakeModel } from "../fakes/model-server.js";
import { useInProcess, useModel } from "../helpers/fixture.js";
import type { startInProcess } from "../helpers/in-process.js";
import { waitFor } from "../helpers/wait.js";

type Hermes = Awaited<ReturnType<typeof startInProcess>>;

function ask(daemon: Daemon, text: string, session = "cli:test") {
  const events: AgentEvent[] = [];
  const { done } = daemon.core.submit({ sessionKey: session, text, source: "cli", listener: (e) => events.push(e) });
  return done.then((outcome) => ({ ...outcome, events }));
}

describe("failover between model endpoints", () => {
  let primary: FakeModel;
  let fallback: FakeModel;
  let hermes: Hermes | undefined;
  const settings = (model: Record<string, unknown> = {}, agent: Record<string, unknown> = {}) => ({
    timezone: "Europe/Berlin",
    model: {
      provider: "ollama",
      base_url: primary.url,
      name: "hermes3:8b",
      retries: 4,
      retry_base_ms: 1,
      timeout_s: 20,
      first_byte_timeout_s: 5,
      retry_primary_after_s: 0.05,
      fallbacks: [{ provider: "openai", base_url: fallback.openaiUrl, name: "small-model", retries: 0, context_tokens: 8192 }],
      ...model,
    },
    agent,
    tools: { enabled: ["clock"] },
    connectors: { cli: { enabled: false }, cron: { enabled: false } },
  });

  beforeEach(async () => {
    primary = await useModel();
    fallback = await useModel();
    fallback.models = ["small-model"];
    fallback.respond(() => ({ text: "from the fallback" }));
    primary.respond(() => ({ text: "from the primary" }));
  });

  it("a primary that refuses connections: the fallback answers, the chat is told once, later calls skip the primary, and it is taken back when healthy", async () => {
    hermes = await useInProcess(settings({ retry_primary_after_s: 0.2 }), []);
    await primary.pause();
    const first = await ask(hermes.daemon, "hello");
    expect(first.reply).toMatch(/^\(answered by small-model: the model at 127\.0\.0\.1:\d+ is unreachable\)\n\nfrom the fallback$/);
    expect(first.events.filter((e) => e.type === "notice")).toHaveLength(1);
    const status = await hermes.daemon.core.status();
    expect(status.serving).toMatchObject({ model: "small-model", primary: false, reason: expect.stringMatching(/unreachable/) });

    await primary.resume();
    const second = await ask(hermes.daemon, "again");
    expect(second.reply).toBe("from the fallback");
    expect(primary.requests).toHaveLength(0);

    await waitFor(async () => (await hermes?.daemon.core.status())?.serving?.primary === true, {
      timeoutMs: 5000,
      message: "the primary serving again",
    });
    const third = await ask(hermes.daemon, "and now?");
    expect(third.reply).toBe("from the primary");
    expect(primary.requests).toHaveLength(1);
    expect(fallback.requests).toHaveLength(2);
  });

  it("a refused connection is not retried when a fallback can answer: the call moves on at once", async () => {
    hermes = await useInProcess(settings({ retries: 4, retry_base_ms: 2000 }), []);
    await primary.pause();
    const started = Date.now();
    expect((await ask(hermes.daemon, "hello")).reply).toMatch(/from the fallback$/);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("with every endpoint down the reply says the model is unreachable", async () => {
    hermes = await useInProcess(settings({ retries: 1, retry_base_ms: 1 }), []);
    await primary.pause();
    await fallback.pause();
    const outcome = await ask(hermes.daemon, "hello");
    expect(outcome.stopReason).toBe("model_error");
    expect(outcome.reply).toMatch(/^The model is unreachable: the model endpoint http:\/\/127\.0\.0\.1:\d+ \(Ollama\) is unreachable/);
  });

  it("a primary that sends nothing within first_byte_timeout_s: the fallback answers", async () => {
    primary.script({ hang: true });
    hermes = await useInProcess(settings({ first_byte_timeout_s: 0.3 }), []);
    const started = Date.now();
    const outcome = await ask(hermes.daemon, "hello");
    expect(outcome.reply).toMatch(/answered by small-model: the model at .* did not answer in time\)\n\nfrom the fallback$/);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(primary.requests).toHaveLength(1);
  });

  it("a primary that answers 500 five times (after its retries): the fallback answers, and the next call does not touch the primary", async () => {
    primary.script(...Array.from({ length: 5 }, () => ({ status: 500 })));
    hermes = await useInProcess(settings(), []);
    const outcome = await ask(hermes.daemon, "hello");
    expect(outcome.reply).toMatch(/answered by small-model: the model at .* answered HTTP 500\)\n\nfrom the fallback$/);
    expect(primary.requests).toHaveLength(5);
    await ask(hermes.daemon, "again");
    expect(primary.requests).toHaveLength(5);
    expect(fallback.requests).toHaveLength(2);
  });

  it("a stream that ends without its final message moves the call", async () => {
    primary.script({ text: "half an ans", endEarly: true });
    hermes = await useInProcess(settings(), []);
    const outcome = await ask(hermes.daemon, "hello");
    expect(outcome.reply).toMatch(/broke off its answer\)\n\nfrom the fallback$/);
  });

  it("the same over the OpenAI API: a silent primary and a stream cut short both move the call", async () => {
    primary.script({ hang: true }, { text: "half an ans", endEarly: true });
    hermes = await useInProcess(settings({ provider: "openai", base_url: primary.openaiUrl, first_byte_timeout_s: 0.3 }), []);
    expect((await ask(hermes.daemon, "one")).reply).toMatch(/did not answer in time\)\n\nfrom the fallback$/);
    await waitFor(async () => (await hermes?.daemon.core.status())?.serving?.primary === true, {
      timeoutMs: 5000,
      message: "the primary serving again",
    });
    expect((await ask(hermes.daemon, "two")).reply).toMatch(/broke off its answer\)\n\nfrom the fallback$/);
    expect(primary.requests).toHaveLength(2);
  });

  it("a primary without the model moves the call", async () => {
    primary.models = [];
    hermes = await useInProcess(settings(), []);
    const outcome = await ask(hermes.daemon, "hello");
    expect(outcome.reply).toMatch(/answered by small-model: hermes3:8b is not available at .*\)\n\nfrom the fallback$/);
  });

  it("an OpenAI-compatible primary without the model (404 model_not_found) moves the call too", async () => {
    primary.strictModels = true;
    hermes = await useInProcess(settings({ provider: "openai", base_url: primary.openaiUrl, name: "absent" }), []);
    const outcome = await ask(hermes.daemon, "hello");
    expect(outcome.reply).toMatch(/answered by small-model: absent is not available/);
  });

  it("a 400 does not fail over: any endpoint would refuse the same request", async () => {
    primary.script({ status: 400, errorMessage: "invalid tool schema" });
    hermes = await useInProcess(settings(), []);
    const outcome = await ask(hermes.daemon, "hello");
    expect(outcome.stopReason).toBe("model_error");
    expect(outcome.reply).toMatch(/HTTP 400: invalid tool schema/);
    expect(fallback.requests).toHaveLength(0);
  });

  it("the prompt is built for the endpoint actually called: a fallback with a smaller window gets a shorter history", async () => {
    hermes = await useInProcess(settings({ context_tokens: 65536, fallbacks: [{ ...fallbackCfg(), context_tokens: 2048 }] }), []);
    const long = "word ".repeat(1500);
    for (let i = 0; i < 4; i++) await ask(hermes.daemon, `${i}: ${long}`);
    expect(primary.requests.at(-1)?.messages.filter((m) => m.role === "user")).toHaveLength(4);
    await primary.pause();
    await ask(hermes.daemon, "short question");
    const sent = fallback.requests.at(-1)?.messages ?? [];
    const chars = sent.reduce((n, m) => n + m.content.length, 0);
    expect(sent.at(-1)?.content).toMatch(/^short question/);
    expect(sent.filter((m) => m.role === "user").length).toBeLessThan(4);
    expect(chars / 3.6).toBeLessThan(2048 - 1024);
    // The next call goes straight to the fallback (sticky) and is built for its window from the start.
    await ask(hermes.daemon, `again: ${long}`);
    const next = fallback.requests.at(-1)?.messages ?? [];
    expect(next.at(-1)?.content).toMatch(/^again: /);
    expect(next.reduce((n, m) => n + m.content.length, 0) / 3.6).toBeLessThan(2048 - 1024 + 400);
  });

  it("an endpoint past its daily_tokens is skipped and the owner told once", async () => {
    primary.respond(() => ({ text: "from the primary", promptTokens: 80, outputTokens: 30 }));
    hermes = await useInProcess(settings({ daily_tokens: 100, base_url: `${primary.url}/` }), []);
    expect((await ask(hermes.daemon, "one")).reply).toBe("from the primary");
    const second = await ask(hermes.daemon, "two");
    expect(second.reply).toMatch(
      /^\(hermes3:8b at .* reached its daily_tokens for today; it is skipped until tomorrow\)\n\nfrom the fallback$/,
    );
    expect((await ask(hermes.daemon, "three")).reply).toBe("from the fallback");
    expect(primary.requests).toHaveLength(1);
    const status = await hermes.daemon.core.status();
    expect(status.serving).toMatchObject({ primary: false, model: "small-model" });
    expect(status.serving?.reason).toMatch(/past its daily_tokens/);
    // Its base_url written with a trailing slash, as the ledger has it without: status still counts its use.
    expect(status.usage_today?.daily_limits).toEqual([{ endpoint: primary.url, model: "hermes3:8b", daily_tokens: 100, used: 110 }]);
  });

  function fallbackCfg() {
    return { provider: "openai", base_url: fallback.openaiUrl, name: "small-model", retries: 0 };
  }
});
