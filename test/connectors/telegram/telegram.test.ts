import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import { BOT, type Call, type FakeTelegram } from "../../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram } from "../../helpers/fixture.js";
import { baseSettings, type Hermes, readDb } from "../../helpers/hermes.js";
import { waitFor } from "../../helpers/wait.js";

const OWNER = 42;
const STRANGER = 7;

describe("the Telegram connector", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  let hermes: Hermes | undefined;
  const start = async (extra: Record<string, unknown> = {}, telegramExtra: Record<string, unknown> = {}) => {
    const base = baseSettings(model.url);
    hermes = await useHermes({
      ...base,
      connectors: {
        cron: { enabled: false },
        telegram: telegram.settings([OWNER], telegramExtra),
      },
      ...extra,
    });
    await telegram.waitFor((c) => c.method === "getUpdates");
    return hermes;
  };
  const sentTo = (chat: number, predicate: (c: Call) => boolean = () => true, from = 0) =>
    telegram.waitFor((c) => c.method === "sendMessage" && Number(c.params.chat_id) === chat && predicate(c), from);

  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
  });

  it("registers its commands and answers the owner with the model's reply, as HTML", async () => {
    model.script({ text: "Hello **owner**, all is `fine`." });
    await start();
    const commands = await telegram.waitFor((c) => c.method === "setMyCommands");
    expect(commands.params.commands.map((c: { command: string }) => c.command)).toEqual([
      "new",
      "stop",
      "status",
      "compact",
      "whoami",
      "help",
    ]);
    telegram.sendText(OWNER, "hi there");
    const reply = await sentTo(OWNER, (c) => c.params.text.includes("Hello"));
    expect(reply.params).toMatchObject({ text: "Hello <b>owner</b>, all is <code>fine</code>.", parse_mode: "HTML" });
    expect(telegram.calls.some((c) => c.method === "sendChatAction" && c.params.action === "typing")).toBe(true);
  });

  it("splits a long reply into ordered chunks under 4096 characters", async () => {
    const paragraphs = Array.from({ length: 40 }, (_, i) => `Paragraph ${i}: ${"word ".repeat(60).trim()}`);
    model.script({ text: paragraphs.join("\n\n") });
    await start();
    telegram.sendText(OWNER, "tell me a lot");
    await sentTo(OWNER, (c) => c.params.text.includes("Paragraph 39"));
    const chunks = telegram.messagesTo(OWNER).map((c) => c.params.text as string);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.every((t) => t.length < 4096)).toBe(true);
    expect(chunks.join("\n\n")).toBe(paragraphs.join("\n\n"));
  });

  it("falls back to plain text when Telegram rejects the formatting", async () => {
    model.script({ text: "Some **bold** claim" });
    await start();
    telegram.rejectHtml = true;
    telegram.sendText(OWNER, "hi");
    const plain = await sentTo(OWNER, (c) => c.params.parse_mode === undefined);
    expect(plain.params.text).toBe("Some **bold** claim");
    expect(telegram.calls.some((c) => c.method === "sendMessage:rejected")).toBe(true);
  });

  it("streams the reply into one message, edited as text arrives, and finalises it", async () => {
    model.script({ text: "A streamed **answer** in pieces." });
    await start({}, { stream_replies: true });
    telegram.sendText(OWNER, "stream please");
    const final = await telegram.waitFor((c) => c.method === "editMessageText" && c.params.parse_mode === "HTML");
    const first = telegram.messagesTo(OWNER)[0];
    expect(final.params.message_id).toBe(first?.result.message_id);
    expect(final.params.text).toBe("A streamed <b>answer</b> in pieces.");
    expect(telegram.messagesTo(OWNER)).toHaveLength(1);
  });

  it("answers a stranger once with their id, and nothing reaches the model", async () => {
    model.script({ text: "owner reply" });
    const h = await start();
    const ignored = () => h.logs.filter((l) => l.msg === "message from a user not in allowed_users ignored").length;
    telegram.sendText(STRANGER, "let me in");
    const notice = await sentTo(STRANGER);
    expect(notice.params.text).toContain(`Your Telegram id is ${STRANGER}`);
    expect(notice.params.text).toContain("allowed_users");
    telegram.sendText(STRANGER, "please?");
    telegram.sendText(OWNER, "hello");
    await sentTo(OWNER);
    await h.waitForLog(() => ignored() === 2);
    expect(telegram.messagesTo(STRANGER)).toHaveLength(1);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.messages.at(-1)?.content).toMatch(/^hello/);
    // Each update is kept as seen, so a replay does not run twice; no copy of its message is kept.
    await h.stop();
    const rows = readDb(h.dbPath, (db) => db.prepare("SELECT status, payload FROM inbound_updates").all()) as {
      status: string;
      payload: string;
    }[];
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.status === "done")).toBe(true);
    expect(rows.map((r) => r.payload).join()).not.toMatch(/let me in|please|hello/);
  });

  it("in a group, answers only when mentioned or replied to", async () => {
    model.respond((req) => ({ text: `got: ${req.messages.at(-1)?.content.split("\n")[0]}` }));
    await start();
    telegram.sendText(OWNER, "just chatting", { chatId: -100, chatType: "group" });
    const mention = `@${BOT.username}`;
    telegram.sendText(OWNER, `${mention} what time is it`, {
      chatId: -100,
      chatType: "group",
      entities: [{ type: "mention", offset: 0, length: mention.length }],
    });
    const reply = await sentTo(-100);
    // In a group the model is told who speaks: the sender's name before the message.
    expect(reply.params.text).toBe("got: user42: what time is it");
    expect(model.requests).toHaveLength(1);
  });

  it("in a group, answers /help@<its username> like a mention and ignores a command for another bot", async () => {
    await start();
    const forOther = "/help@some_other_bot";
    telegram.sendText(OWNER, forOther, {
      chatId: -100,
      chatType: "supergroup",
      entities: [{ type: "bot_command", offset: 0, length: forOther.length }],
    });
    const forUs = `/help@${BOT.username}`;
    telegram.sendText(OWNER, forUs, {
      chatId: -100,
      chatType: "supergroup",
      entities: [{ type: "bot_command", offset: 0, length: forUs.length }],
    });
    const help = await sentTo(-100);
    expect(help.params.text).toMatch(/^Hi! I am hermes/);
    telegram.sendText(OWNER, "/new", { chatId: -100, chatType: "supergroup", entities: [{ type: "bot_command", offset: 0, length: 4 }] });
    const stop = `/stop@${BOT.username.toUpperCase()}`;
    telegram.sendText(OWNER, stop, {
      chatId: -100,
      chatType: "supergroup",
      entities: [{ type: "bot_command", offset: 0, length: stop.length }],
    });
    await sentTo(-100, (c) => c.params.text === "Nothing was running.");
    expect(telegram.messagesTo(-100).map((c) => c.params.text)).toEqual([help.params.text, "Nothing was running."]);
    expect(model.requests).toHaveLength(0);
  });

  it("in a forum topic, streams the reply, types and asks for approval in that topic, also after a restart", async () => {
    model.script({ text: "Let me check.", toolCalls: [{ name: "shell", arguments: { command: "echo topic >> ledger.txt" } }] });
    model.respond(() => ({ text: "Done in the topic." }));
    const h = await start({ tools: { enabled: ["clock", "shell"] } }, { stream_replies: true });
    const mention = `@${BOT.username}`;
    telegram.sendText(OWNER, `${mention} append please`, {
      chatId: -1001,
      chatType: "supergroup",
      topic: 77,
      entities: [{ type: "mention", offset: 0, length: mention.length }],
    });
    const request = await sentTo(-1001, (c) => Boolean(c.params.reply_markup));
    const before = telegram.calls.filter((c) => ["sendMessage", "sendChatAction"].includes(c.method));
    expect(before.map((c) => [c.method, c.params.message_thread_id])).toEqual(before.map((c) => [c.method, 77]));
    expect(before.some((c) => c.method === "sendMessage" && "Let me check.".startsWith(c.params.text))).toBe(true);
    expect(before.some((c) => c.method === "sendChatAction")).toBe(true);
    await h.kill();
    hermes = await h.restart();
    const mark = telegram.calls.length;
    telegram.press(OWNER, -1001, request.result.message_id, request.params.reply_markup.inline_keyboard[0][0].callback_data);
    const done = await sentTo(-1001, (c) => c.params.text === "Done in the topic.", mark);
    expect(done.params.message_thread_id).toBe(77);
    expect(readFileSync(join(h.dir, "data/files/ledger.txt"), "utf8")).toBe("topic\n");
  });

  it("runs a gated tool when the owner presses Approve; another user's press does nothing", async () => {
    model.script({ toolCalls: [{ name: "shell", arguments: { command: "echo pressed >> ledger.txt" } }] });
    model.respond((req) => ({ text: `Done: ${req.messages.at(-1)?.content.split("\n")[0]}` }));
    const h = await start({ tools: { enabled: ["clock", "shell"] } });
    telegram.sendText(OWNER, "append please");
    const request = await sentTo(OWNER, (c) => Boolean(c.params.reply_markup));
    expect(request.params.text).toContain("hermes wants to run shell");
    const [approve, deny] = request.params.reply_markup.inline_keyboard[0];
    expect(approve.text).toBe("Approve");
    expect(deny.text).toBe("Deny");
    expect(Buffer.byteLength(approve.callback_data)).toBeLessThanOrEqual(64);
    const messageId = request.result.message_id;
    telegram.press(STRANGER, OWNER, messageId, approve.callback_data);
    const refused = await telegram.waitFor((c) => c.method === "answerCallbackQuery");
    expect(refused.params.text).toBe("Only the owner can decide this.");
    expect(existsSync(join(h.dir, "data/files/ledger.txt"))).toBe(false);
    telegram.press(OWNER, OWNER, messageId, approve.callback_data);
    const edited = await telegram.waitFor((c) => c.method === "editMessageText" && c.params.message_id === messageId);
    expect(edited.params.text).toMatch(/✅ Approved by telegram:@user42/);
    expect(edited.params.reply_markup).toEqual({ inline_keyboard: [] });
    await sentTo(OWNER, (c) => c.params.text.startsWith("Done: exit code 0"));
    expect(readFileSync(join(h.dir, "data/files/ledger.txt"), "utf8")).toBe("pressed\n");
    const beforeSecond = telegram.calls.length;
    telegram.press(OWNER, OWNER, messageId, approve.callback_data);
    const second = await telegram.waitFor((c) => c.method === "answerCallbackQuery", beforeSecond);
    expect(second.params.text).toMatch(/^approval \S+ was already approved by telegram:@user42 at /);
    expect(readFileSync(join(h.dir, "data/files/ledger.txt"), "utf8")).toBe("pressed\n");
  });

  it("resumes the run exactly once when the button is pressed after a daemon restart", async () => {
    model.script({ toolCalls: [{ name: "shell", arguments: { command: "echo once >> ledger.txt" } }] });
    model.respond(() => ({ text: "Resumed and done." }));
    const h = await start({ tools: { enabled: ["clock", "shell"] } });
    telegram.sendText(OWNER, "append once");
    const request = await sentTo(OWNER, (c) => Boolean(c.params.reply_markup));
    await h.kill();
    hermes = await h.restart();
    const mark = telegram.calls.length;
    telegram.press(OWNER, OWNER, request.result.message_id, request.params.reply_markup.inline_keyboard[0][0].callback_data);
    await sentTo(OWNER, (c) => c.params.text === "Resumed and done.", mark);
    expect(readFileSync(join(h.dir, "data/files/ledger.txt"), "utf8")).toBe("once\n");
    expect(model.requests).toHaveLength(2);
  });

  it("processes an update delivered twice only once, and waits out a 429", async () => {
    model.respond(() => ({ text: "answered" }));
    await start();
    telegram.fail("sendMessage", { status: 429, description: "Too Many Requests: retry after 1", retryAfter: 1 });
    const id = telegram.sendText(OWNER, "only once");
    telegram.push({
      update_id: id,
      message: {
        message_id: 1,
        date: 0,
        chat: { id: OWNER, type: "private" },
        from: { id: OWNER, is_bot: false, first_name: "o" },
        text: "only once",
      },
    });
    await sentTo(OWNER, (c) => c.params.text === "answered");
    expect(telegram.calls.some((c) => c.method === "sendMessage:fault")).toBe(true);
    telegram.sendText(OWNER, "second message");
    await telegram.waitFor(
      (c) => c.method === "sendMessage" && c.params.text === "answered",
      telegram.calls.findIndex((c) => c.method === "sendMessage") + 1,
    );
    expect(model.requests.map((r) => r.messages.at(-1)?.content.split("\n")[0])).toEqual(["only once", "second message"]);
  });

  it("restarts polling when getUpdates hangs, and status shows it", async () => {
    model.respond(() => ({ text: "still listening" }));
    telegram.hangGetUpdates(1);
    const h = await start();
    await h.waitForLog((l) => l.msg === "telegram getUpdates made no progress; restarted polling");
    telegram.sendText(OWNER, "are you there?");
    await sentTo(OWNER, (c) => c.params.text === "still listening");
    const status = JSON.parse((await h.cli(["status", "--json"])).stdout);
    const tg = status.connectors.find((c: { name: string }) => c.name === "telegram");
    expect(tg.ok).toBe(true);
    expect(tg.detail).toMatch(/polling restarted 1×/);
  });

  it("serves at once when Telegram cannot be reached at start (no network at boot), and answers once it can", async () => {
    model.respond(() => ({ text: "back online" }));
    const port = Number(new URL(telegram.apiRoot).port);
    const settings = telegram.settings([OWNER]);
    await telegram.close();
    hermes = await useHermes({ ...baseSettings(model.url), connectors: { cron: { enabled: false }, telegram: settings } });
    const h = hermes;
    await h.waitForLog((l) => l.msg === "hermes is ready");
    expect((await h.ask("still there?")).stdout).toContain("back online");
    const status = JSON.parse((await h.cli(["status", "--json"])).stdout);
    expect(status.connectors.find((c: { name: string }) => c.name === "telegram").detail).toMatch(/Telegram not reachable yet/);
    telegram = await useTelegram(port);
    await telegram.waitFor((c) => c.method === "setMyCommands");
    telegram.sendText(OWNER, "hello again");
    await sentTo(OWNER, (c) => c.params.text === "back online");
  });

  it("keeps a reply that cannot be sent while Telegram is unreachable, and sends it once Telegram is back", async () => {
    let answer!: () => void;
    model.script({ text: "made it", gate: new Promise<void>((resolve) => (answer = resolve)) });
    const h = await start();
    const port = Number(new URL(telegram.apiRoot).port);
    telegram.sendText(OWNER, "a question before the outage");
    await model.waitForRequests(1);
    await telegram.close();
    answer();
    const pause = await h.waitForLog((l) => l.msg === "telegram is not reachable; trying again" && l.method === "sendMessage");
    expect(pause.pauseMs).toBe(3000);
    telegram = await useTelegram(port);
    await sentTo(OWNER, (c) => c.params.text === "made it");
    // Kept, not lost and not doubled: the one reply, and no notice of a failure before it.
    expect(telegram.messagesTo(OWNER).map((c) => c.params.text)).toEqual(["made it"]);
  });

  it("starts a fresh session with /new and aborts a long run with /stop", async () => {
    model.respond((req) => ({ text: `I see ${req.messages.length} messages` }));
    await start();
    telegram.sendText(OWNER, "first");
    await sentTo(OWNER, (c) => c.params.text === "I see 2 messages");
    telegram.sendText(OWNER, "/new");
    await sentTo(OWNER, (c) => c.params.text === "Started a new conversation.");
    telegram.sendText(OWNER, "again");
    await sentTo(
      OWNER,
      (c) => c.params.text === "I see 2 messages",
      telegram.calls.findIndex((c) => c.params.text === "Started a new conversation."),
    );
    model.script({ hang: true });
    telegram.sendText(OWNER, "something slow");
    await model.waitForRequests(3);
    telegram.sendText(OWNER, "/stop");
    await sentTo(OWNER, (c) => c.params.text === "Stopped.");
  });

  it("/stop says Stopped once; a reply streamed so far stays, marked as cut short", async () => {
    const h = await start({}, { stream_replies: true });
    const repliesSent = () =>
      readDb(h.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM runs WHERE reply_sent_at IS NOT NULL").pluck().get());
    model.script({ hang: true });
    telegram.sendText(OWNER, "something slow");
    await model.waitForRequests(1);
    telegram.sendText(OWNER, "/stop");
    await sentTo(OWNER, (c) => c.params.text === "Stopped.");
    await waitFor(() => repliesSent() === 1, { message: "the stopped run's end to be handled" });
    expect(telegram.messagesTo(OWNER).map((c) => c.params.text)).toEqual(["Stopped."]);

    model.script({ text: "The first part of a long answer", hangAfterText: true });
    telegram.sendText(OWNER, "something long");
    const draft = await sentTo(OWNER, (c) => String(c.params.text).startsWith("The first"));
    await telegram.waitFor((c) => c.method === "editMessageText" && c.params.text === "The first part of a long answer");
    telegram.sendText(OWNER, "/stop");
    await waitFor(() => repliesSent() === 2, { message: "the second stopped run's end to be handled" });
    // The command's answer and the run's end are sent apart, in either order: both are awaited.
    const stopped = () => telegram.messagesTo(OWNER).filter((c) => c.params.text === "Stopped.").length;
    await waitFor(() => stopped() >= 2, { message: "the second /stop's answer" });
    expect(stopped()).toBe(2); // one for each /stop, none from the runs
    const edits = telegram.calls.filter((c) => c.method === "editMessageText" && c.params.message_id === draft.result.message_id);
    expect(edits.at(-1)?.params.text).toBe("The first part of a long answer …(stopped)");
  });

  it("sends a reply Telegram refused after the next restart, once", async () => {
    model.respond(() => ({ text: "the answer you were owed" }));
    const h = await start();
    telegram.fail("sendMessage", { status: 403, description: "Forbidden: bot was blocked by the user" });
    telegram.sendText(OWNER, "question");
    await h.waitForLog((l) => l.msg === "telegram send failed");
    expect(telegram.messagesTo(OWNER)).toHaveLength(0);
    await h.kill();
    hermes = await h.restart();
    await hermes.waitForLog((l) => l.msg === "sending a reply the previous process could not send");
    await sentTo(OWNER, (c) => c.params.text === "the answer you were owed");
    await hermes.stop();
    hermes = await h.restart();
    expect(hermes.logs.some((l) => l.msg === "sending a reply the previous process could not send")).toBe(false);
    expect(telegram.messagesTo(OWNER)).toHaveLength(1);
    expect(model.requests).toHaveLength(1);
  });

  it("keeps its offset across a restart, so acknowledged updates are not fetched again", async () => {
    model.respond(() => ({ text: "ok" }));
    const h = await start();
    telegram.sendText(OWNER, "one");
    await sentTo(OWNER);
    await h.stop();
    const before = Math.max(...telegram.offsets);
    hermes = await h.restart();
    await telegram.waitFor((c) => c.method === "getUpdates", telegram.calls.length);
    expect(telegram.offsets.at(-1)).toBeGreaterThanOrEqual(before);
    expect(model.requests).toHaveLength(1);
  });
});
