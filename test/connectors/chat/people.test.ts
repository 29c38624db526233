import { beforeEach, describe, expect, it } from "vitest";
import { GUILD_CHANNEL } from "../../fakes/discord-server.js";
import type { FakeModel, RecordedRequest } from "../../fakes/model-server.js";
import { BOT, type FakeTelegram } from "../../fakes/telegram-server.js";
import { useDiscord, useHermes, useModel, useTelegram } from "../../helpers/fixture.js";
import { baseSettings, readDb } from "../../helpers/hermes.js";

const ALICE = 42;
const BOB = 43;
const GROUP = -100500;
const MENTION = `@${BOT.username}`;

describe("people: senders, memory per person, group chats", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;

  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
  });

  /** Alice or Bob says `text` to the bot in the group; resolves the model request that answered it. */
  const say = async (user: number, text: string): Promise<RecordedRequest> => {
    const before = model.requests.length;
    const from = telegram.calls.length;
    telegram.sendText(user, `${MENTION} ${text}`, {
      chatId: GROUP,
      chatType: "supergroup",
      entities: [{ type: "mention", offset: 0, length: MENTION.length }],
    });
    await telegram.waitFor((c) => c.method === "sendMessage" && Number(c.params.chat_id) === GROUP, from);
    return model.requests[before] as RecordedRequest;
  };

  /** What a request shows of the remembered facts: the system prompt and the note after the newest message. */
  const factsShown = (req: RecordedRequest) => `${req.messages[0]?.content}\n${req.messages.at(-1)?.content}`;

  it("labels each group message with its sender, and shows each person their own facts plus the shared ones", async () => {
    const hermes = await useHermes({
      ...baseSettings(model.url),
      tools: { enabled: ["clock", "memory"] },
      connectors: { cron: { enabled: false }, telegram: telegram.settings([{ id: ALICE, name: "Alice" }, BOB]) },
    });
    await telegram.waitFor((c) => c.method === "getUpdates");
    model.script({ toolCalls: [{ name: "memory", arguments: { action: "remember", fact: "is vegetarian" } }] }, { text: "Noted, Alice." });
    const first = await say(ALICE, "remember that I am vegetarian");
    expect(first.messages.at(-1)?.content).toMatch(/^Alice: remember that I am vegetarian\n/);
    model.script({ toolCalls: [{ name: "memory", arguments: { action: "remember", fact: "loves steak" } }] }, { text: "Noted, Bob." });
    const second = await say(BOB, "remember that I love steak");
    // Bob has no name in allowed_users: his Telegram first name is used.
    expect(second.messages.at(-1)?.content).toMatch(/^user43: remember that I love steak\n/);
    expect(second.messages[0]?.content).not.toContain("vegetarian");
    // Bob cannot forget (or see) Alice's fact.
    model.script({ toolCalls: [{ name: "memory", arguments: { action: "forget", id: 1 } }] }, { text: "I cannot." });
    const before = model.requests.length;
    await say(BOB, "forget fact 1");
    expect(model.requests[before + 1]?.messages.at(-1)?.content).toContain("there is no fact #1");
    model.script(
      { toolCalls: [{ name: "memory", arguments: { action: "remember", fact: "the wifi password is hunter2", for: "everyone" } }] },
      { text: "Noted for everyone." },
    );
    // A shared fact needs the owner's yes: the approval is asked in the chat, and the owner gives it.
    const asked = telegram.calls.length;
    await say(BOB, "remember for all of us: the wifi password is hunter2");
    const pending = readDb(hermes.dbPath, (db) =>
      db.prepare("SELECT id FROM approvals WHERE status = 'pending'").pluck().all(),
    ) as string[];
    expect(pending).toHaveLength(1);
    expect((await hermes.cli(["approvals", "approve", pending[0] as string])).code).toBe(0);
    await telegram.waitFor((c) => c.method === "sendMessage" && String(c.params.text).includes("Noted for everyone."), asked);

    model.script({ text: "Try the mushroom risotto." });
    const aliceAsks = await say(ALICE, "what should I cook tonight?");
    const alice = factsShown(aliceAsks);
    expect(alice).toContain('- "is vegetarian" (#1)');
    expect(alice).toContain("What you know about Alice");
    expect(alice).toContain('- "the wifi password is hunter2" (#3)');
    expect(alice).not.toContain("loves steak");
    model.script({ text: "A ribeye." });
    const bobAsks = await say(BOB, "what should I cook tonight?");
    const bob = factsShown(bobAsks);
    expect(bob).toContain('- "loves steak" (#2)');
    expect(bob).toContain('- "the wifi password is hunter2" (#3)');
    expect(bob).not.toContain("vegetarian");
    // The shared facts are in the system prompt, the same for both; each one's own facts follow their
    // message, so a new speaker does not change the prompt's start (the model server's cache holds).
    expect(aliceAsks.messages[0]?.content).toBe(bobAsks.messages[0]?.content);
    expect(aliceAsks.messages[0]?.content).toContain("the wifi password is hunter2");
    expect(aliceAsks.messages.at(-1)?.content).toMatch(
      /^Alice: what should I cook tonight\?\n[\s\S]*What you know about Alice[\s\S]*is vegetarian/,
    );
    const shared = aliceAsks.messages.length - 1; // everything before Alice's message and her note
    expect(bobAsks.messages.slice(0, shared)).toEqual(aliceAsks.messages.slice(0, shared));

    const owners = readDb(hermes.dbPath, (db) => db.prepare("SELECT id, owner, owner_name FROM memories ORDER BY id").all());
    expect(owners).toEqual([
      { id: 1, owner: `telegram:${ALICE}`, owner_name: "Alice" },
      { id: 2, owner: `telegram:${BOB}`, owner_name: "user43" },
      { id: 3, owner: null, owner_name: null },
    ]);
    const list = await hermes.cli(["memory", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("#1  Alice (telegram:42): is vegetarian");
    expect(list.stdout).toContain("#3  everyone: the wifi password is hunter2");
    const forget = await hermes.cli(["memory", "forget", "2"]);
    expect(forget).toMatchObject({ code: 0, stdout: "forgot #2\n" });
    expect((await hermes.cli(["memory", "forget", "2"])).code).toBe(1);
    model.script({ text: "Anything you like." });
    expect(factsShown(await say(BOB, "and now?"))).not.toContain("loves steak");
  }, 60_000);

  it("keeps a group run resumed after a restart a group run: the sender's own facts still follow the message", async () => {
    const h = await useHermes({
      ...baseSettings(model.url),
      tools: { enabled: ["clock", "memory", "shell"] },
      connectors: { cron: { enabled: false }, telegram: telegram.settings([{ id: ALICE, name: "Alice" }, BOB]) },
    });
    await telegram.waitFor((c) => c.method === "getUpdates");
    model.script({ toolCalls: [{ name: "memory", arguments: { action: "remember", fact: "is vegetarian" } }] }, { text: "Noted, Alice." });
    await say(ALICE, "remember that I am vegetarian");
    model.script({ toolCalls: [{ name: "shell", arguments: { command: "echo hi" } }] }, { text: "Ran it." });
    const from = telegram.calls.length;
    telegram.sendText(ALICE, `${MENTION} run it`, {
      chatId: GROUP,
      chatType: "supergroup",
      entities: [{ type: "mention", offset: 0, length: MENTION.length }],
    });
    const request = await telegram.waitFor((c) => c.method === "sendMessage" && Boolean(c.params.reply_markup), from);
    await h.kill();
    const restarted = await h.restart();
    const before = model.requests.length;
    const button = (request.params.reply_markup as { inline_keyboard: { callback_data: string }[][] }).inline_keyboard[0]?.[0];
    telegram.press(ALICE, GROUP, request.result.message_id as number, button?.callback_data ?? "");
    await telegram.waitFor((c) => c.method === "sendMessage" && c.params.text === "Ran it.", from);
    const resumed = model.requests[before] as RecordedRequest;
    expect(resumed.messages[0]?.content).not.toContain("is vegetarian");
    expect(resumed.messages.findLast((m) => m.role === "user")?.content).toMatch(/^Alice: run it\n[\s\S]*- "is vegetarian" \(#1\)/);
    await restarted.stop();
  }, 60_000);

  it("compacts a Telegram chat on /compact", async () => {
    await useHermes({
      ...baseSettings(model.url),
      connectors: { cron: { enabled: false }, telegram: telegram.settings([ALICE]) },
    });
    await telegram.waitFor((c) => c.method === "getUpdates");
    for (const text of ["my bike is blue", "and my car is red", "/compact"]) {
      const from = telegram.calls.length;
      telegram.sendText(ALICE, text);
      await telegram.waitFor((c) => c.method === "sendMessage" && Number(c.params.chat_id) === ALICE, from);
    }
    const reply = telegram.messagesTo(ALICE).at(-1);
    expect(reply?.params.text).toMatch(/^compacted 1 turn\(s\) into the summary/);
    expect(model.requests.at(-1)?.compaction).toBe(true);
    expect(model.requests.at(-1)?.messages[1]?.content).toContain("User: my bike is blue");
  }, 60_000);

  it("records who sent each run: a Telegram user by id, the shell as cli", async () => {
    const hermes = await useHermes({
      ...baseSettings(model.url),
      connectors: { cron: { enabled: false }, telegram: telegram.settings([{ id: ALICE, name: "Alice" }]) },
    });
    await telegram.waitFor((c) => c.method === "getUpdates");
    const from = telegram.calls.length;
    telegram.sendText(ALICE, "hello");
    await telegram.waitFor((c) => c.method === "sendMessage" && Number(c.params.chat_id) === ALICE, from);
    expect((await hermes.ask("hi from the shell")).code).toBe(0);
    const senders = readDb(hermes.dbPath, (db) => db.prepare("SELECT source, sender_id, sender_name FROM runs ORDER BY rowid").all());
    expect(senders).toEqual([
      { source: "telegram", sender_id: `telegram:${ALICE}`, sender_name: "Alice" },
      { source: "cli", sender_id: "cli", sender_name: "the owner" },
    ]);
    // A private chat is not labelled: only groups need to say who is speaking.
    expect(model.requests[0]?.messages.at(-1)?.content).toMatch(/^hello\n/);
  }, 60_000);

  it("names a Discord user from allowed_users in a server channel, and records them as the sender", async () => {
    const discord = await useDiscord();
    const carol = "2000000000000000042";
    const hermes = await useHermes({
      ...baseSettings(model.url),
      connectors: { cron: { enabled: false }, discord: discord.settings([{ id: carol, name: "Carol" }]) },
    });
    await hermes.waitForLog((l) => l.msg === "discord gateway ready");
    model.script({ text: "Hi Carol." });
    discord.say(carol, "who am I?", { mention: true });
    await discord.waitFor((c) => c.method === `POST /channels/${GUILD_CHANNEL}/messages`);
    expect(model.requests[0]?.messages.at(-1)?.content).toMatch(/^Carol: who am I\?\n/);
    const sender = readDb(hermes.dbPath, (db) => db.prepare("SELECT sender_id, sender_name FROM runs").get());
    expect(sender).toEqual({ sender_id: `discord:${carol}`, sender_name: "Carol" });
  }, 60_000);
});
