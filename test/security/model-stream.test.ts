/** A model stream that stalls mid-answer, or streams on without end, frees the model slot with a clear error. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { baseSettings, type Hermes, startHermes } from "../helpers/hermes.js";

describe.each(["ollama", "openai"] as const)("a hostile model stream (%s)", (provider) => {
  let model: FakeModel;
  let hermes: Hermes | undefined;
  beforeEach(async () => {
    model = await startFakeModel();
    const base = baseSettings(model.url, provider);
    const url = provider === "openai" ? model.openaiUrl : model.url;
    hermes = await startHermes({
      ...base,
      model: { ...(base.model as object), base_url: url, first_byte_timeout_s: 1, retries: 0, timeout_s: 60 },
    });
  });
  afterEach(async () => {
    await hermes?.stop();
    hermes = undefined;
    await model.close();
  });

  it("is given up when it goes silent mid-answer, long before the total timeout", async () => {
    model.script({ text: "I was saying", hangAfterText: true });
    const started = Date.now();
    const result = await (hermes as Hermes).ask("hi");
    expect(result.stdout + result.stderr).toMatch(/stopped sending mid-answer for 1 s/);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it("is cut off past a million characters", async () => {
    const piece = "x".repeat(100_000);
    model.script({ text: piece.repeat(12), textPieces: Array.from({ length: 12 }, () => piece) });
    const result = await (hermes as Hermes).ask("hi");
    expect(result.stdout + result.stderr).toMatch(/reply passed 1000000 characters and was cut off/);
  });
});
