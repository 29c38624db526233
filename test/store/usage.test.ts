import { beforeEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/types.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import { estimateTokens } from "../../src/model/tokens.js";
import type { FakeModel } from "../fakes/model-server.js";
import { useInProcess, useModel } from "../helpers/fixture.js";
import type { startInProcess } from "../helpers/in-process.js";

type Hermes = Awaited<ReturnType<typeof startInProcess>>;

function ask(daemon: Daemon, text: string, session = "cli:test") {
  const events: AgentEvent[] = [];
  const { done } = daemon.core.submit({ sessionKey: session, text, source: "cli", listener: (e) => events.push(e) });
  return done.then((outcome) => ({ ...outcome, events }));
}

function rows(hermes: Hermes): Record<string, unknown>[] {
  return hermes.daemon.core.store.db.prepare("SELECT * FROM model_calls ORDER BY id").all() as Record<string, unknown>[];
}

describe("the usage ledger and budgets", () => {
  let model: FakeModel;
  let hermes: Hermes | undefined;
  const settings = (modelCfg: Record<string, unknown> = {}, agent: Record<string, unknown> = {}) => ({
    timezone: "Europe/Berlin",
    model: { base_url: model.url, name: "hermes3:8b", retries: 0, retry_base_ms: 1, ...modelCfg },
    agent,
    tools: { enabled: ["clock"] },
    connectors: { cli: { enabled: false }, cron: { enabled: false } },
  });

  beforeEach(async () => {
    model = await useModel();
  });

  it("records Ollama's prompt_eval_count and eval_count for every step, and the step's usage reaches the events", async () => {
    model.script(
      { toolCalls: [{ name: "clock" }], promptTokens: 321, outputTokens: 17 },
      { text: "it is late", promptTokens: 400, outputTokens: 5 },
    );
    hermes = await useInProcess(settings(), []);
    const outcome = await ask(hermes.daemon, "what time is it?");
    expect(outcome.reply).toBe("it is late");
    const ledger = rows(hermes);
    expect(ledger).toMatchObject([
      { step: 1, endpoint: model.url, model: "hermes3:8b", prompt_tokens: 321, output_tokens: 17, estimated: 0, outcome: "ok" },
      { step: 2, prompt_tokens: 400, output_tokens: 5, estimated: 0, outcome: "ok" },
    ]);
    for (const r of ledger) {
      expect(r.first_byte_ms).toEqual(expect.any(Number));
      expect(r.total_ms as number).toBeGreaterThanOrEqual(r.first_byte_ms as number);
      expect(r.run_id).toBe(outcome.runId);
    }
    const usage = outcome.events.filter((e) => e.type === "usage");
    expect(usage).toMatchObject([
      { step: 1, promptTokens: 321, outputTokens: 17, estimated: false },
      { step: 2, promptTokens: 400, outputTokens: 5 },
    ]);
    const [audit] = hermes.daemon.core.store.audit.list(undefined, 10);
    expect(audit).toMatchObject({ tool: "clock", step_prompt_tokens: 321, step_output_tokens: 17, step_model: "hermes3:8b" });
  });

  it("records OpenAI usage with cached prompt tokens (streamed, requested with include_usage)", async () => {
    model.script({ text: "hi", promptTokens: 1200, outputTokens: 3, cachedTokens: 1024 });
    hermes = await useInProcess(settings({ provider: "openai", base_url: model.openaiUrl }), []);
    await ask(hermes.daemon, "hello");
    expect(model.requests[0]?.body.stream_options).toEqual({ include_usage: true });
    expect(rows(hermes)).toMatchObject([{ prompt_tokens: 1200, output_tokens: 3, cached_tokens: 1024, estimated: 0 }]);
  });

  it("stores an estimate, marked as one, when the endpoint reports no tokens", async () => {
    const text = "a reply of some forty characters or so.";
    model.script({ text, noUsage: true });
    hermes = await useInProcess(settings(), []);
    await ask(hermes.daemon, "hello");
    const [row] = rows(hermes);
    expect(row).toMatchObject({ estimated: 1, outcome: "ok" });
    expect(row?.prompt_tokens as number).toBeGreaterThan(10);
    expect(row?.output_tokens).toBe(Math.ceil(text.length / 3.6));
  });

  it("estimates an unreported Chinese answer at a token or more a character, as the prompt is counted", async () => {
    const text = "今天下午三点在咖啡馆见面。".repeat(4);
    model.script({ text, noUsage: true });
    hermes = await useInProcess(settings(), []);
    await ask(hermes.daemon, "hello");
    expect(rows(hermes)[0]).toMatchObject({ estimated: 1, output_tokens: estimateTokens(text) });
    expect(rows(hermes)[0]?.output_tokens as number).toBeGreaterThanOrEqual(text.length);
  });

  for (const provider of ["ollama", "openai"] as const) {
    it(`${provider}: a token count that is not a number is taken as not reported, and later runs are not harmed`, async () => {
      const garbage =
        provider === "ollama"
          ? { prompt_eval_count: "n/a", eval_count: -3 }
          : { prompt_tokens: "lots", completion_tokens: Number.NaN, total_tokens: null };
      model.script({ text: "first", rawUsage: garbage }, { text: "second" }, { text: "third", promptTokens: 1e6 });
      const base_url = provider === "ollama" ? model.url : model.openaiUrl;
      hermes = await useInProcess(settings({ provider, base_url }), []);
      for (const text of ["first", "second", "third"]) expect((await ask(hermes.daemon, "hello")).reply).toBe(text);
      expect(rows(hermes)).toMatchObject([
        { prompt_tokens: expect.any(Number), output_tokens: expect.any(Number), estimated: 1, outcome: "ok" },
        { prompt_tokens: 100, output_tokens: 10, estimated: 0, outcome: "ok" },
        { prompt_tokens: 1e6, estimated: 0, outcome: "ok" },
      ]);
      expect(rows(hermes)[0]?.prompt_tokens as number).toBeGreaterThan(0);
    });
  }

  it("a failed call is a row too, with its outcome", async () => {
    model.script({ status: 503 });
    hermes = await useInProcess(settings(), []);
    await ask(hermes.daemon, "hello");
    expect(rows(hermes)).toMatchObject([{ outcome: "http", prompt_tokens: 0, output_tokens: 0 }]);
  });

  it("agent.max_run_tokens stops a run before the model call that would pass it, with a reply that says so", async () => {
    model.respond(() => ({ toolCalls: [{ name: "clock" }], promptTokens: 300, outputTokens: 20 }));
    hermes = await useInProcess(settings({}, { max_run_tokens: 700, max_steps: 10, repeat_limit: 100 }), []);
    const outcome = await ask(hermes.daemon, "loop forever");
    expect(outcome.stopReason).toBe("max_run_tokens");
    expect(outcome.reply).toMatch(/it would pass 700 tokens \(agent\.max_run_tokens = 700\)/);
    expect(model.requests).toHaveLength(2);
    expect(hermes.daemon.core.store.usage.runTokens(outcome.runId)).toBe(640);
  });

  it("a 400 'context length exceeded' becomes one rebuilt, smaller request instead of a failed run", async () => {
    model.script({ status: 400, errorMessage: "the input length exceeds the context length" }, { text: "fits now" });
    hermes = await useInProcess(settings({ context_tokens: 8192, max_output_tokens: 512 }), []);
    for (let i = 0; i < 3; i++) await ask(hermes.daemon, `${i} ${"many words ".repeat(600)}`);
    const before = model.requests.length;
    model.script({ status: 400, errorMessage: "the input length exceeds the context length" }, { text: "fits now" });
    const outcome = await ask(hermes.daemon, "short one");
    expect(outcome.reply).toBe("fits now");
    const [rejected, retried] = model.requests.slice(before);
    const size = (r: typeof rejected) => JSON.stringify(r?.messages).length;
    expect(size(retried)).toBeLessThan(size(rejected));
    expect(
      rows(hermes)
        .slice(-2)
        .map((r) => r.outcome),
    ).toEqual(["context_exceeded", "ok"]);
  });
});
