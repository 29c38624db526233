import { createServer } from "node:net";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, type Hermes } from "../helpers/hermes.js";

async function closedPortUrl(): Promise<string> {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return `http://127.0.0.1:${port}`;
}

describe.each(["ollama", "openai"] as const)("the daemon with provider %s", (provider) => {
  let model: FakeModel;
  let hermes: Hermes | undefined;
  const settings = (extra: Record<string, unknown> = {}) => {
    const base = baseSettings(provider === "ollama" ? model.url : model.openaiUrl, provider);
    return { ...base, ...extra };
  };

  beforeEach(async () => {
    model = await useModel();
  });

  it("answers a plain message and sends the context size", async () => {
    model.script({ text: "Hello from the model." });
    hermes = await useHermes(settings());
    const result = await hermes.ask("hi");
    expect(result.stdout).toBe("Hello from the model.\n");
    expect(result.code).toBe(0);
    const body = model.requests[0]?.body as Record<string, any>;
    if (provider === "ollama") expect(body.options.num_ctx).toBe(16384);
    expect(model.requests[0]?.messages.at(-1)?.content).toMatch(
      /^hi\n\n\(Current time: \w+day \d+ \w+ \d{4}, \d\d:\d\d UTC\+0[12]:00 \(Europe\/Berlin\)\)$/,
    );
  });

  it("runs a clock round trip and feeds the result back to the model", async () => {
    model.script({ toolCalls: [{ name: "clock", arguments: {} }] });
    model.respond((req) => ({ text: `The clock says: ${req.messages.at(-1)?.content}` }));
    hermes = await useHermes(settings());
    const result = await hermes.ask("what time is it?");
    expect(result.stdout).toMatch(/^The clock says: .*\(Europe\/Berlin; ISO \d{4}-/);
    const toolMessage = model.requests[1]?.messages.at(-1);
    expect(toolMessage?.role).toBe("tool");
  });

  it("keeps a note across a daemon restart", async () => {
    model.script({ toolCalls: [{ name: "notes", arguments: { action: "add", text: "buy oat milk" } }] }, { text: "Noted." });
    hermes = await useHermes(settings());
    expect((await hermes.ask("note: buy oat milk")).stdout).toBe("Noted.\n");
    await hermes.stop();
    hermes = await hermes.restart();
    model.script({ toolCalls: [{ name: "notes", arguments: { action: "list" } }] });
    model.respond((req) => ({ text: `Your notes: ${req.messages.at(-1)?.content}` }));
    const result = await hermes.ask("what are my notes?");
    expect(result.stdout).toContain("buy oat milk");
  });

  it("answers an unknown tool and invalid arguments with error results, and the run still ends", async () => {
    model.script({
      toolCalls: [
        { name: "teleport", arguments: { to: "mars" } },
        { name: "notes", arguments: { action: "fly" } },
        { name: "clock", arguments: "{not json" },
      ],
    });
    model.script({ text: "Sorry, I could not do that." });
    hermes = await useHermes(settings());
    const result = await hermes.ask("do impossible things");
    expect(result.stdout).toBe("Sorry, I could not do that.\n");
    const results = model.requests[1]?.messages.filter((m) => m.role === "tool").map((m) => m.content) ?? [];
    expect(results[0]).toMatch(/no tool named 'teleport'.*Tools that exist: .*clock.*notes/);
    expect(results[1]).toMatch(/invalid arguments for notes/);
    expect(results[2]).toMatch(/not valid JSON/);
  });

  it("retries a 429 and then succeeds", async () => {
    model.script({ status: 429, retryAfterS: 0 }, { status: 503 }, { text: "Worked on the third try." });
    hermes = await useHermes(settings());
    const result = await hermes.ask("hello");
    expect(result.stdout).toBe("Worked on the third try.\n");
    expect(model.requests).toHaveLength(3);
  });
});

describe("the daemon when the model endpoint is down", () => {
  it("keeps running and every reply says where the model is unreachable and how to fix it", async () => {
    const url = await closedPortUrl();
    const hermes = await useHermes(baseSettings(url));
    try {
      const result = await hermes.ask("hello?");
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`unreachable`);
      expect(result.stdout).toContain(url);
      expect(result.stdout).toContain("systemctl start ollama");
      const status = await hermes.cli(["status", "--json"]);
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout).model.reachable).toBe(false);
    } finally {
      await hermes.stop();
    }
  });

  it("tells a missing model apart and names the pull command", async () => {
    const model = await useModel();
    model.models = ["llama3.2:3b"];
    const hermes = await useHermes(baseSettings(model.url));
    try {
      const result = await hermes.ask("hello?");
      expect(result.stdout).toContain("ollama pull hermes3:8b");
    } finally {
      await hermes.stop();
      await model.close();
    }
  });
});

describe("the daemon's prompt room", () => {
  it("says at start when the system prompt and tools leave a chat no room, with the fix; not with the defaults", async () => {
    const model = await useModel();
    const small = await useHermes({
      ...baseSettings(model.url),
      model: { ...(baseSettings(model.url).model as object), context_tokens: 2048 },
    });
    const line = await small.waitForLog((l) => typeof l.msg === "string" && l.msg.startsWith("the system prompt and tool signatures take"));
    expect(line).toMatchObject({ level: 50, roomTokens: 1024 });
    expect(line.fixedTokens as number).toBeGreaterThanOrEqual(1024);
    expect(line.msg).toMatch(/no room is left for the chat; raise model\.context_tokens/);
    await small.stop();
    const roomy = await useHermes(baseSettings(model.url));
    await roomy.waitForLog((l) => l.msg === "hermes is ready");
    expect((await roomy.ask("hello")).code).toBe(0);
    expect(roomy.logs.some((l) => typeof l.msg === "string" && l.msg.startsWith("the system prompt and tool signatures"))).toBe(false);
  });
});
