/** What endpoints send, through the real daemon: call ids (hermes keys its calls by ids of its own), and broken chunks. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { baseSettings, readDb, startHermes } from "../helpers/hermes.js";

describe("tool call ids from the endpoint", () => {
  let model: FakeModel;
  beforeAll(async () => {
    model = await startFakeModel();
  });
  afterAll(() => model.close());

  for (const provider of ["ollama", "openai"] as const) {
    it(`${provider}: a call whose id is a number is run once and the run ends with the reply`, async () => {
      const url = provider === "ollama" ? model.url : model.openaiUrl;
      const hermes = await startHermes({ ...baseSettings(url, provider), tools: { enabled: ["clock"] } });
      try {
        const before = model.requests.length;
        model.script({ toolCalls: [{ name: "clock", arguments: {}, id: 12 }] }, { text: "It is late." });
        const ask = await hermes.ask("what time is it?");
        expect(ask.stdout).toContain("It is late.");
        expect(model.requests.length - before).toBe(2);
        const sent = model.requests.at(-1)?.body.messages as { role: string; tool_call_id?: string; tool_calls?: { id?: string }[] }[];
        expect(sent.filter((m) => m.role === "tool")).toHaveLength(1);
        if (provider === "openai") {
          // The result went back under the id the assistant message carries: hermes' own, not the number.
          const callId = sent.find((m) => m.role === "assistant")?.tool_calls?.[0]?.id;
          expect(callId).toMatch(/^[a-zA-Z0-9]{9}$/);
          expect(sent.find((m) => m.role === "tool")?.tool_call_id).toBe(callId);
        }
        await hermes.stop();
        expect(readDb(hermes.dbPath, (db) => db.prepare("SELECT count(*) FROM tool_calls").pluck().get())).toBe(1);
      } finally {
        await hermes.stop();
      }
    });
  }

  for (const provider of ["ollama", "openai"] as const) {
    // OpenAI's arguments are a string: 100,000 levels (200 KB) of it ended the run. Ollama's are JSON in the
    // response, which the fake endpoint can write only so deep: 1,000 levels, past the limit all the same.
    it(`${provider}: arguments nested deeper than 64 levels get the model an error result, and the run ends with its reply`, async () => {
      const url = provider === "ollama" ? model.url : model.openaiUrl;
      const hermes = await startHermes({ ...baseSettings(url, provider), tools: { enabled: ["clock"] } });
      try {
        const depth = provider === "openai" ? 100_000 : 1000;
        const deep = `{"tz":${"[".repeat(depth)}${"]".repeat(depth)}}`;
        const before = model.requests.length;
        model.script(
          { toolCalls: [{ name: "clock", arguments: provider === "openai" ? deep : JSON.parse(deep) }] },
          { text: "It is late." },
        );
        const ask = await hermes.ask("what time is it?");
        expect(ask.stdout).toContain("It is late.");
        const sent = model.requests.at(-1)?.body.messages as { role: string; content?: string }[];
        expect(model.requests.length - before).toBe(2);
        expect(sent.find((m) => m.role === "tool")?.content).toContain("the arguments nest deeper than 64 levels");
      } finally {
        await hermes.stop();
      }
    }, 60_000);
  }

  it("openai: a stream chunk that is not JSON is answered and logged by hermes; the SDK writes nothing raw to stderr", async () => {
    const hermes = await startHermes(baseSettings(model.openaiUrl, "openai"));
    try {
      model.script({ raw: "data: {nope\n\n" });
      const ask = await hermes.ask("hello");
      expect(ask.stdout).toMatch(/sent something that is not a valid answer/);
      expect(hermes.stderr()).toBe("");
    } finally {
      await hermes.stop();
    }
  });
});
