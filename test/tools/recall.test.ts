/**
 * Recall end to end: the daemon (spawned) with Alice and Bob on the fake Telegram, the model calling
 * `recall`, and `hermes search` from the shell.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel, RecordedRequest } from "../fakes/model-server.js";
import type { FakeTelegram } from "../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram } from "../helpers/fixture.js";
import { baseSettings, runCli } from "../helpers/hermes.js";

const ALICE = 42;
const BOB = 43;

describe("recall: the tool and hermes search", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;

  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
  });

  /** `user` writes to the bot in their private chat; resolves the model requests of that run. */
  const say = async (user: number, text: string): Promise<RecordedRequest[]> => {
    const before = model.requests.length;
    const from = telegram.calls.length;
    telegram.sendText(user, text);
    await telegram.waitFor((c) => c.method === "sendMessage" && Number(c.params.chat_id) === user, from);
    return model.requests.slice(before);
  };

  it("answers a person from their own chats only, and the owner at the shell from every chat", async () => {
    const hermes = await useHermes({
      ...baseSettings(model.url),
      tools: { enabled: ["clock", "recall"] },
      connectors: {
        cron: { enabled: false },
        telegram: telegram.settings([
          { id: ALICE, name: "Alice" },
          { id: BOB, name: "Bob" },
        ]),
      },
    });
    await telegram.waitFor((c) => c.method === "getUpdates");
    model.script({ text: "Noted." });
    await say(ALICE, "The plumber Anna comes on Tuesday");
    model.script({ text: "Noted." });
    await say(BOB, "My plumber's name is Jan Müller");
    expect(model.requests[0]?.tools?.map((t) => t.function?.name)).toContain("recall");

    model.script({ toolCalls: [{ name: "recall", arguments: { query: "plumber" } }] }, { text: "Anna, on Tuesday." });
    const alice = await say(ALICE, "what did I say about the plumber?");
    const result = String(alice[1]?.messages.at(-1)?.content);
    expect(result).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d telegram:42, Alice: "The \[plumber\] Anna comes on Tuesday"$/m);
    expect(result).not.toContain("Jan");

    model.script({ toolCalls: [{ name: "recall", arguments: { query: "muller" } }] }, { text: "Jan Müller." });
    const bob = await say(BOB, "who is my plumber?");
    expect(String(bob[1]?.messages.at(-1)?.content)).toContain('telegram:43, Bob: "My plumber\'s name is Jan [Müller]"');

    const shell = await runCli(["search", "plumber", "--config", hermes.configPath]);
    expect(shell.code).toBe(0);
    const lines = shell.stdout.trim().split("\n");
    // Newest first: the tool's results are not indexed (only what was said), so the question comes first.
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d {2}telegram:43 {2}Bob: who is my \[plumber\]\?$/);
    expect(lines.some((l) => l.includes("telegram:42  Alice: The [plumber] Anna comes on Tuesday"))).toBe(true);
    expect(lines.some((l) => l.includes("telegram:43  Bob: My [plumber]'s name is Jan Müller"))).toBe(true);

    const json = await runCli(["search", "plumber", "Anna", "--session", "telegram:42", "--json", "--config", hermes.configPath]);
    const parsed = JSON.parse(json.stdout) as { hits: Record<string, unknown>[] };
    expect(parsed.hits).toHaveLength(1);
    expect(parsed.hits[0]).toMatchObject({
      session: "telegram:42",
      speaker: "Alice",
      role: "user",
      snippet: "The plumber Anna comes on Tuesday",
    });
    expect(Date.parse(String(parsed.hits[0]?.at))).toBeGreaterThan(Date.now() - 60_000);
  });

  it("hermes search: no match, bad input and a stopped daemon", async () => {
    const hermes = await useHermes(baseSettings(model.url));
    model.script({ text: "Hello." });
    await hermes.ask("hello there, ünïcode");
    await hermes.stop();
    // The daemon is stopped: search reads the database itself.
    const found = await runCli(["search", "unicode", "--config", hermes.configPath]);
    expect(found.stdout).toContain("cli:default  the owner: hello there, [ünïcode]");
    const none = await runCli(["search", "plumber", "--config", hermes.configPath]);
    expect([none.code, none.stdout]).toEqual([0, 'No message matches "plumber".\n']);
    const syntax = await runCli(["search", '"NEAR(', "AND", "*", "--config", hermes.configPath]);
    expect(syntax.code).toBe(0);
    expect(syntax.stderr).toBe("");
    const usage = await runCli(["search", "--config", hermes.configPath]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("usage: hermes search QUERY");
    const limit = await runCli(["search", "hello", "--limit", "0", "--config", hermes.configPath]);
    expect([limit.code, limit.stderr]).toEqual([2, expect.stringContaining("--limit is a whole number from 1 to 50")]);
  });
});
