import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/schema.js";
import { createLogger } from "../../src/log.js";
import { createModel } from "../../src/model/create.js";
import { withToolCallFormat } from "../../src/model/format.js";
import { createOllamaClient } from "../../src/model/ollama.js";
import { createOpenAIClient } from "../../src/model/openai.js";
import { requestText } from "../../src/model/stream-text.js";
import type { ModelRequest } from "../../src/model/types.js";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";

const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] };
const modelConfig = (base_url: string, extra: Record<string, unknown> = {}) =>
  configSchema().parse({ model: { base_url, retries: 2, retry_base_ms: 5, ...extra } }).model;

/**
 * A turn that streams `text`, then breaks the connection. (The last piece written before the break can
 * be lost with it: an empty piece takes that place, so the client surely saw all of `text`.)
 */
const brokenAfter = (text: string) => ({ text, textPieces: [text, ""], pieceGapMs: 20, drop: true });

/** The text a listener was given, as one string. */
function listener() {
  const pieces: string[] = [];
  return { onText: (delta: string) => pieces.push(delta), text: () => pieces.join("") };
}

describe("the text of one request streams as one text, however many attempts it takes", () => {
  it("passes on only what goes beyond the shown text, while an attempt repeats it; stops at the first difference", () => {
    const seen = listener();
    const text = requestText(seen.onText);
    const first = text.attempt();
    first?.("The ans");
    first?.("wer ");
    const second = text.attempt();
    for (const delta of ["The a", "nswer is", " 4", "2."]) second?.(delta);
    first?.("late words from a broken attempt");
    expect(seen.text()).toBe("The answer is 42.");

    const third = text.attempt();
    third?.("The answer is 43, or");
    third?.(" more");
    expect(seen.text()).toBe("The answer is 42.");
    expect(requestText(undefined).attempt()).toBeUndefined();
  });
});

describe("a request retried after part of its answer streamed", () => {
  let fake: FakeModel;
  beforeEach(async () => {
    fake = await startFakeModel();
  });
  afterEach(() => fake.close());

  it("ollama: a retry that repeats and extends the text is streamed once", async () => {
    fake.script(brokenAfter("The answer is"), { text: "The answer is 42." });
    const seen = listener();
    const result = await createOllamaClient(modelConfig(fake.url)).chat(request, { onText: seen.onText });
    expect(result.ok && result.text).toBe("The answer is 42.");
    expect(seen.text()).toBe("The answer is 42.");
    expect(fake.requests).toHaveLength(2);
  });

  it("openai: the same over a streamed chat completion", async () => {
    fake.script(brokenAfter("The answer "), { text: "The answer is 42." });
    const seen = listener();
    const result = await createOpenAIClient(modelConfig(fake.openaiUrl)).chat(request, { onText: seen.onText });
    expect(result.ok && result.text).toBe("The answer is 42.");
    expect(seen.text()).toBe("The answer is 42.");
  });

  it("a retry that says something else streams nothing more: the listener keeps what it had, the result has the new text", async () => {
    fake.script(brokenAfter("The answer is forty"), { text: "The answer is 42." });
    const seen = listener();
    const result = await createOllamaClient(modelConfig(fake.url)).chat(request, { onText: seen.onText });
    expect(result.ok && result.text).toBe("The answer is 42.");
    expect(seen.text()).toBe("The answer is forty");
  });

  it("the tool-call filter reads the attempts as one text: a break inside a block or its opening tag hides no text and shows none twice", async () => {
    const call = '<tool_call>\n{"name": "clock", "arguments": {}}\n</tool_call>';
    const client = withToolCallFormat(createOllamaClient(modelConfig(fake.url)), "auto");
    const whole = `Let me look. ${call}\nOne moment.`;
    for (const brokenAt of [whole.indexOf('"clock"'), whole.indexOf("call>")]) {
      fake.script(brokenAfter(whole.slice(0, brokenAt)), { text: whole });
      const seen = listener();
      const result = await client.chat(request, { onText: seen.onText });
      expect(result.ok && result.toolCalls.map((c) => c.name)).toEqual(["clock"]);
      expect(seen.text()).toBe("Let me look. \nOne moment.");
    }
  });
});

describe("a request that moves to another endpoint after part of its answer streamed", () => {
  let primary: FakeModel;
  let fallback: FakeModel;
  beforeEach(async () => {
    [primary, fallback] = await Promise.all([startFakeModel(), startFakeModel()]);
  });
  afterEach(() => Promise.all([primary.close(), fallback.close()]));

  it("streams the fallback's text only beyond what the primary showed", async () => {
    const cfg = configSchema().parse({
      model: { base_url: primary.url, retries: 0, fallbacks: [{ provider: "openai", base_url: fallback.openaiUrl, name: "hermes3:8b" }] },
    }).model;
    const { chain } = await createModel(cfg, { usedToday: () => 0, log: createLogger("silent") });
    primary.script(brokenAfter("The answer is"));
    fallback.script({ text: "The answer is 42." });
    const seen = listener();
    const result = await chain.chat(request, { onText: seen.onText });
    chain.stop();
    expect(result.ok && result.text).toBe("The answer is 42.");
    expect(seen.text()).toBe("The answer is 42.");
    expect(fallback.requests).toHaveLength(1);
  });
});
