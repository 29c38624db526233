import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { configSchema, type EndpointConfig } from "../../src/config/schema.js";
import { readServerWindow, windowWarning } from "../../src/model/context-window.js";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";

describe("reading a server's real context window", () => {
  let fake: FakeModel;
  beforeEach(async () => {
    fake = await startFakeModel();
  });
  afterEach(() => fake.close());

  const endpoint = (model: Record<string, unknown>): EndpointConfig => configSchema().parse({ timezone: "UTC", model }).model;
  const read = (model: Record<string, unknown>) => readServerWindow(endpoint(model), AbortSignal.timeout(2000));

  it("Ollama: the model's trained context length from /api/show", async () => {
    fake.contextLength = 8192;
    expect(await read({ base_url: fake.url })).toEqual({ contextTokens: 8192, source: expect.stringMatching(/Ollama \/api\/show/) });
  });

  it("llama.cpp: n_ctx from /props", async () => {
    fake.nCtx = 4096;
    expect(await read({ provider: "openai", base_url: fake.openaiUrl })).toMatchObject({
      contextTokens: 4096,
      source: "llama.cpp /props n_ctx",
    });
  });

  it("vLLM and others: max_model_len from /v1/models", async () => {
    fake.maxModelLen = 32768;
    expect(await read({ provider: "openai", base_url: fake.openaiUrl })).toMatchObject({ contextTokens: 32768 });
  });

  it("LM Studio: the loaded context length", async () => {
    fake.loadedContextLength = 6144;
    expect(await read({ provider: "openai", base_url: fake.openaiUrl })).toMatchObject({
      contextTokens: 6144,
      source: "LM Studio loaded context",
    });
  });

  it("a server that says nothing, or is down, gives no window and no warning", async () => {
    const cfg = endpoint({ provider: "openai", base_url: fake.openaiUrl });
    expect(await readServerWindow(cfg, AbortSignal.timeout(2000))).toBeUndefined();
    await fake.pause();
    expect(await readServerWindow(endpoint({ base_url: fake.url }), AbortSignal.timeout(2000))).toBeUndefined();
    expect(windowWarning(cfg, undefined)).toBeUndefined();
  });

  it("warns only when context_tokens is larger than the server's window", () => {
    const cfg = endpoint({ context_tokens: 8192 });
    expect(windowWarning(cfg, { contextTokens: 8192, source: "x" })).toBeUndefined();
    expect(windowWarning(cfg, { contextTokens: 4096, source: "x" })).toMatch(/context_tokens is 8192 but x says .* has 4096/);
  });
});
