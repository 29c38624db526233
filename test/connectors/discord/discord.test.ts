import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { BOT_USER, type DiscordCall, type FakeDiscord, GUILD_CHANNEL } from "../../fakes/discord-server.js";
import type { FakeModel } from "../../fakes/model-server.js";
import { useDiscord, useHermes, useModel } from "../../helpers/fixture.js";
import { baseSettings, type Hermes, readDb } from "../../helpers/hermes.js";

const OWNER = "2000000000000000042";
const STRANGER = "2000000000000000007";

describe("the Discord connector", () => {
  let model: FakeModel;
  let discord: FakeDiscord;
  let hermes: Hermes | undefined;
  const start = async (extra: Record<string, unknown> = {}, connectors: Record<string, unknown> = {}) => {
    hermes = await useHermes({
      ...baseSettings(model.url),
      connectors: { cron: { enabled: false }, discord: discord.settings([OWNER]), ...connectors },
      ...extra,
    });
    await hermes.waitForLog((l) => l.msg === "discord gateway ready");
    return hermes;
  };
  const dmOf = (user: string) => discord.dmChannelOf(user);
  const sentIn = (channel: string, predicate: (c: DiscordCall) => boolean = () => true, from = 0) =>
    discord.waitFor((c) => c.method === `POST /channels/${channel}/messages` && predicate(c), from);
  const lastLine = (req: { messages: { content: string }[] }) => req.messages.at(-1)?.content.split("\n")[0];

  beforeEach(async () => {
    model = await useModel();
    discord = await useDiscord();
  });

  it("identifies with the intents it needs, registers its slash commands and answers a DM from the owner", async () => {
    model.script({ text: "Hello **owner**, all is `fine`." });
    await start();
    const identify = await discord.waitFor((c) => c.method === "IDENTIFY");
    const intents = identify.body.intents as number;
    for (const bit of [1 << 0, 1 << 9, 1 << 12, 1 << 15]) expect(intents & bit).toBe(bit);
    const commands = await discord.waitFor((c) => c.method === `PUT /applications/${BOT_USER.id}/commands`);
    expect(commands.body.map((c: { name: string }) => c.name)).toEqual(["new", "stop", "status", "compact", "whoami", "help"]);
    discord.dm(OWNER, "hi there");
    const reply = await sentIn(dmOf(OWNER));
    expect(reply.body.content).toBe("Hello **owner**, all is `fine`.");
    expect(reply.body.allowed_mentions).toEqual({ parse: [] });
    expect(discord.calls.some((c) => c.method === `POST /channels/${dmOf(OWNER)}/typing`)).toBe(true);
    expect(lastLine(model.requests[0] as never)).toBe("hi there");
  });

  it("tells a stranger their id once, and nothing reaches the model", async () => {
    model.script({ text: "owner reply" });
    const h = await start();
    const ignored = () => h.logs.filter((l) => l.msg === "message from a user not in allowed_users ignored").length;
    discord.dm(STRANGER, "let me in");
    const notice = await sentIn(dmOf(STRANGER));
    expect(notice.body.content).toContain(`Your Discord id is ${STRANGER}`);
    expect(notice.body.content).toContain("connectors.discord.allowed_users");
    discord.dm(STRANGER, "please?");
    discord.dm(OWNER, "hello");
    await sentIn(dmOf(OWNER));
    await h.waitForLog(() => ignored() === 2);
    expect(discord.messagesIn(dmOf(STRANGER))).toHaveLength(1);
    expect(model.requests).toHaveLength(1);
    expect(lastLine(model.requests[0] as never)).toBe("hello");
  });

  it("in a server channel, answers a stranger who mentions it nowhere: logged only, as in Telegram's groups", async () => {
    model.script({ text: "owner reply" });
    const h = await start();
    discord.say(STRANGER, "let me in", { mention: true });
    await h.waitForLog((l) => l.msg === "message from a user not in allowed_users ignored");
    discord.say(OWNER, "hello", { mention: true });
    await sentIn(GUILD_CHANNEL);
    expect(discord.messagesIn(GUILD_CHANNEL).map((c) => c.body.content)).toEqual([expect.stringContaining("owner reply")]);
    expect(model.requests).toHaveLength(1);
  });

  it("in a server channel, answers only messages that mention it, without the mention", async () => {
    model.respond((req) => ({ text: `got: ${lastLine(req)}` }));
    await start();
    discord.say(OWNER, "just chatting");
    discord.say(OWNER, "what time is it", { mention: true });
    const reply = await sentIn(GUILD_CHANNEL);
    // In a server channel the model is told who speaks: the sender's name before the message.
    expect(reply.body.content).toBe("got: user0042: what time is it");
    expect(model.requests).toHaveLength(1);
  });

  it("does not hold a reply back while the typing indicator is rate-limited", async () => {
    model.script({ text: "right away" });
    await start();
    discord.fail(/^POST \/channels\/\d+\/typing$/, 429, 1, 60);
    discord.dm(OWNER, "hi");
    const reply = await sentIn(dmOf(OWNER));
    expect(reply.body.content).toBe("right away");
    expect(discord.calls.some((c) => c.method === `POST /channels/${dmOf(OWNER)}/typing:fault`)).toBe(true);
  });

  it("logs a typing indicator given up on a rate limit quietly, not as a failed send", async () => {
    model.script({ text: "right away" });
    const h = await start({ log: { level: "debug" } });
    discord.fail(/^POST \/channels\/\d+\/typing$/, 429, 1, 60);
    discord.dm(OWNER, "hi");
    await sentIn(dmOf(OWNER));
    await h.waitForLog((l) => l.what === "typing");
    // Typing is given up on a rate limit by design (the reply must not wait behind it): nothing failed.
    expect(h.logs.filter((l) => l.what === "typing" && Number(l.level) >= 40)).toEqual([]);
  });

  it("splits a long reply into ordered messages under 2000 characters", async () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) => `Paragraph ${i}: ${"word ".repeat(40).trim()}`);
    model.script({ text: paragraphs.join("\n\n") });
    await start();
    discord.dm(OWNER, "tell me a lot");
    await sentIn(dmOf(OWNER), (c) => c.body.content.includes("Paragraph 29"));
    const chunks = discord.messagesIn(dmOf(OWNER)).map((c) => c.body.content as string);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.every((t) => t.length <= 2000)).toBe(true);
    expect(chunks.join("\n\n")).toBe(paragraphs.join("\n\n"));
  });

  it("streams the reply into one message edited at most about once a second, then finalises it split under 2000", async () => {
    const paragraphs = Array.from({ length: 12 }, (_, i) => `Paragraph ${i}: ${"word ".repeat(40).trim()}`);
    const full = paragraphs.join("\n\n");
    model.script({ textPieces: paragraphs.map((p, i) => (i ? `\n\n${p}` : p)), pieceGapMs: 250 });
    await start({}, { discord: discord.settings([OWNER], { stream_replies: true }) });
    const dm = dmOf(OWNER);
    discord.dm(OWNER, "stream please");
    await sentIn(dm, (c) => c.body.content.includes("Paragraph 11"));
    const posts = discord.messagesIn(dm);
    const first = posts[0] as DiscordCall;
    expect(first.body.content).toBe(paragraphs[0]);
    const edits = discord.calls.filter((c) => c.method === `PATCH /channels/${dm}/messages/${first.result.id}`);
    const streamed = edits.slice(0, -1);
    expect(streamed.length).toBeGreaterThanOrEqual(1);
    streamed.forEach((e, i) => {
      expect(e.at - (i ? (streamed[i - 1] as DiscordCall).at : first.at)).toBeGreaterThan(900);
    });
    expect(edits.every((e) => e.body.content.length <= 2000 && e.body.allowed_mentions?.parse?.length === 0)).toBe(true);
    const finalFirst = (edits.at(-1) as DiscordCall).body.content as string;
    expect(posts.slice(1).every((p) => p.body.content.length <= 2000)).toBe(true);
    expect([finalFirst, ...posts.slice(1).map((p) => p.body.content)].join("\n\n")).toBe(full);
    expect(posts.length).toBeGreaterThan(1);
  });

  it("while streaming, keeps the text before a tool call, asks for approval with buttons, and sends the reply after it", async () => {
    model.script({ text: "Let me append that.", toolCalls: [{ name: "shell", arguments: { command: "echo streamed >> ledger.txt" } }] });
    model.respond(() => ({ text: "Appended." }));
    await start({ tools: { enabled: ["clock", "shell"] } }, { discord: discord.settings([OWNER], { stream_replies: true }) });
    const dm = dmOf(OWNER);
    discord.dm(OWNER, "append please");
    const request = await sentIn(dm, (c) => c.body.components?.length > 0);
    expect(request.body.content).toContain("hermes wants to run shell");
    discord.click(OWNER, request.result, request.body.components[0].components[0].custom_id);
    await discord.waitFor(
      (c) => c.method.startsWith(`P`) && c.path.startsWith(`/channels/${dm}/messages`) && c.body.content === "Appended.",
    );
    const shown = (post: DiscordCall) =>
      [post, ...discord.calls.filter((c) => c.method === `PATCH /channels/${dm}/messages/${post.result.id}`)].at(-1)?.body.content;
    expect(discord.messagesIn(dm).map(shown)).toEqual(["Let me append that.", request.body.content, "Appended."]);
  });

  it("runs a gated tool when the owner clicks Approve; another user's click only gets an ephemeral notice", async () => {
    model.script({ toolCalls: [{ name: "shell", arguments: { command: "echo pressed >> ledger.txt" } }] });
    model.respond((req) => ({ text: `Done: ${lastLine(req)}` }));
    const h = await start({ tools: { enabled: ["clock", "shell"] } });
    discord.dm(OWNER, "append please");
    const request = await sentIn(dmOf(OWNER), (c) => c.body.components?.length > 0);
    expect(request.body.content).toContain("hermes wants to run shell");
    const [approve, deny] = request.body.components[0].components;
    expect(approve).toMatchObject({ label: "Approve", style: 3 });
    expect(deny).toMatchObject({ label: "Deny", style: 4 });

    discord.click(STRANGER, request.result, approve.custom_id);
    const refused = await discord.waitFor((c) => c.method === "callback");
    expect(refused.body).toMatchObject({ type: 4, data: { content: "Only the owner can decide this.", flags: 64 } });
    expect(existsSync(join(h.dir, "data/files/ledger.txt"))).toBe(false);

    discord.click(OWNER, request.result, approve.custom_id);
    const update = await discord.waitFor((c) => c.method === "callback" && c.body.type === 7);
    expect(update.body.data.content).toMatch(/✅ Approved by discord:user0042/);
    expect(update.body.data.components).toEqual([]);
    await sentIn(dmOf(OWNER), (c) => c.body.content.startsWith("Done: exit code 0"));
    expect(readFileSync(join(h.dir, "data/files/ledger.txt"), "utf8")).toBe("pressed\n");

    const mark = discord.calls.length;
    discord.click(OWNER, request.result, approve.custom_id);
    const second = await discord.waitFor((c) => c.method === "callback", mark);
    expect(second.body).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(second.body.data.content).toMatch(/already approved/);
    expect(readFileSync(join(h.dir, "data/files/ledger.txt"), "utf8")).toBe("pressed\n");
  });

  it("resumes the run exactly once when Approve is clicked after a daemon restart", async () => {
    model.script({ toolCalls: [{ name: "shell", arguments: { command: "echo once >> ledger.txt" } }] });
    model.respond(() => ({ text: "Resumed and done." }));
    const h = await start({ tools: { enabled: ["clock", "shell"] } });
    discord.dm(OWNER, "append once");
    const request = await sentIn(dmOf(OWNER), (c) => c.body.components?.length > 0);
    await h.kill();
    hermes = await h.restart();
    await hermes.waitForLog((l) => l.msg === "discord gateway ready");
    const mark = discord.calls.length;
    const approve = request.body.components[0].components[0].custom_id;
    discord.click(OWNER, request.result, approve);
    discord.click(OWNER, request.result, approve);
    await sentIn(dmOf(OWNER), (c) => c.body.content === "Resumed and done.", mark);
    const callbacks = discord.calls.slice(mark).filter((c) => c.method === "callback");
    expect(callbacks.map((c) => c.body.type).sort()).toEqual([4, 7]);
    expect(readFileSync(join(h.dir, "data/files/ledger.txt"), "utf8")).toBe("once\n");
    expect(model.requests).toHaveLength(2);
  });

  it("edits the approval message when it is decided from the shell", async () => {
    model.script({ toolCalls: [{ name: "shell", arguments: { command: "echo never >> ledger.txt" } }] });
    model.respond(() => ({ text: "Understood, I did not run it." }));
    const h = await start({ tools: { enabled: ["clock", "shell"] } });
    discord.dm(OWNER, "try it");
    const request = await sentIn(dmOf(OWNER), (c) => c.body.components?.length > 0);
    const approvalId = (request.body.components[0].components[1].custom_id as string).slice(2);
    expect((await h.cli(["approvals", "deny", approvalId])).code).toBe(0);
    const edit = await discord.waitFor((c) => c.method === `PATCH /channels/${dmOf(OWNER)}/messages/${request.result.id}`);
    expect(edit.body.content).toMatch(/❌ Denied by cli/);
    expect(edit.body.components).toEqual([]);
    await sentIn(dmOf(OWNER), (c) => c.body.content === "Understood, I did not run it.");
    expect(existsSync(join(h.dir, "data/files/ledger.txt"))).toBe(false);
  });

  it("starts a fresh session with /new, stops a run with /stop, and answers the /status slash command", async () => {
    model.respond((req) => ({ text: `I see ${req.messages.length} messages` }));
    await start();
    discord.dm(OWNER, "first");
    await sentIn(dmOf(OWNER), (c) => c.body.content === "I see 2 messages");
    discord.dm(OWNER, "/new");
    const fresh = await sentIn(dmOf(OWNER), (c) => c.body.content === "Started a new conversation.");
    discord.dm(OWNER, "again");
    await sentIn(dmOf(OWNER), (c) => c.body.content === "I see 2 messages", discord.calls.indexOf(fresh));
    model.script({ hang: true });
    discord.dm(OWNER, "something slow");
    await model.waitForRequests(3);
    discord.dm(OWNER, "/stop");
    await sentIn(dmOf(OWNER), (c) => c.body.content === "Stopped.");
    discord.slash(OWNER, dmOf(OWNER), "status");
    const status = await discord.waitFor((c) => c.method === "edit original");
    expect(status.body.content).toMatch(/discord: ok \(connected as hermes/);
  });

  it("defers the /status slash command (Discord wants a first answer within 3 s) and edits the status in", async () => {
    // A speech server that never answers: status waits out its probe (5 s).
    const hung = createServer(() => {});
    hung.listen(0, "127.0.0.1");
    await once(hung, "listening");
    onTestFinished(() => {
      hung.closeAllConnections();
      hung.close();
    });
    const speech = { base_url: `http://127.0.0.1:${(hung.address() as AddressInfo).port}/v1`, model: "Systran/faster-whisper-small" };
    await start({ speech });
    discord.slash(OWNER, dmOf(OWNER), "status");
    const first = await discord.waitFor((c) => c.method === "callback");
    expect(first.body.type).toBe(5);
    const answer = await discord.waitFor((c) => c.method === "edit original");
    expect(answer.body.content).toMatch(/discord: ok \(connected as hermes/);
    expect(discord.calls.filter((c) => c.method === "callback")).toHaveLength(1);
  });

  it("resumes after the gateway connection drops, and keeps answering", async () => {
    model.respond(() => ({ text: "still here" }));
    const h = await start();
    discord.dropConnections();
    await discord.waitFor((c) => c.method === "RESUME");
    await h.waitForLog((l) => l.msg === "discord gateway resumed");
    discord.dm(OWNER, "are you there?");
    await sentIn(dmOf(OWNER), (c) => c.body.content === "still here");
    const status = JSON.parse((await h.cli(["status", "--json"])).stdout);
    const dc = status.connectors.find((c: { name: string }) => c.name === "discord");
    expect(dc).toMatchObject({ ok: true });
    expect(dc.detail).toMatch(/reconnected 1×/);
  });

  it("stops cleanly when Discord has gone away", async () => {
    const h = await start();
    await discord.close();
    await h.waitForLog((l) => l.msg === "discord gateway connection lost; reconnecting");
    expect(await h.stop()).toBe(0);
    expect(h.logs.filter((l) => l.msg === "discord gateway connection lost; reconnecting")).toHaveLength(1);
  });

  it("reports a missing Message Content intent once, with the fix, and does not retry", async () => {
    discord.disallowMessageContent = true;
    model.script({ text: "cli still works" });
    hermes = await useHermes({
      ...baseSettings(model.url),
      connectors: { cron: { enabled: false }, discord: discord.settings([OWNER]) },
    });
    const h = hermes;
    const reported = await h.waitForLog((l) => typeof l.msg === "string" && l.msg.includes("Message Content intent"));
    expect(reported.msg).toMatch(/Privileged Gateway Intents/);
    const status = JSON.parse((await h.cli(["status", "--json"])).stdout);
    expect(status.connectors.find((c: { name: string }) => c.name === "discord")).toMatchObject({ ok: false, needsOwner: true });
    expect((await h.ask("hi")).stdout).toContain("cli still works");
    expect(discord.calls.filter((c) => c.method === "IDENTIFY")).toHaveLength(1);
    expect(h.logs.filter((l) => l.msg === reported.msg)).toHaveLength(1);
    expect(h.logs.some((l) => l.msg === "could not connect to Discord; will retry")).toBe(false);
  });

  it("reports a rejected token with the fix and stays up for the other connectors", async () => {
    model.script({ text: "cli still works" });
    hermes = await useHermes({
      ...baseSettings(model.url),
      connectors: { cron: { enabled: false }, discord: discord.settings([OWNER], { token: "not-the-right-token" }) },
    });
    const h = hermes;
    const reported = await h.waitForLog((l) => typeof l.msg === "string" && l.msg.startsWith("Discord rejected the bot token"));
    expect(reported.msg).toContain("DISCORD_BOT_TOKEN");
    expect(JSON.stringify(h.logs)).not.toContain("not-the-right-token");
    expect((await h.ask("hi")).stdout).toContain("cli still works");
    expect(h.logs.some((l) => l.msg === "could not connect to Discord; will retry")).toBe(false);
  });

  it("keeps trying when Discord is down at start, and connects once it is back", async () => {
    model.respond(() => ({ text: "back online" }));
    discord.fail(/^GET \/gateway\/bot$/, 502, 4);
    hermes = await useHermes({
      ...baseSettings(model.url),
      connectors: { cron: { enabled: false }, discord: discord.settings([OWNER]) },
    });
    const h = hermes;
    await h.waitForLog((l) => l.msg === "could not connect to Discord; will retry");
    const status = JSON.parse((await h.cli(["status", "--json"])).stdout);
    expect(status.connectors.find((c: { name: string }) => c.name === "discord").detail).toMatch(/connecting to the gateway/);
    await h.waitForLog((l) => l.msg === "discord gateway ready");
    discord.dm(OWNER, "hello again");
    await sentIn(dmOf(OWNER), (c) => c.body.content === "back online");
  });

  it("answers a message the gateway delivers twice only once", async () => {
    model.respond(() => ({ text: "answered" }));
    await start();
    const id = discord.dm(OWNER, "only once");
    discord.redeliver(id);
    discord.dm(OWNER, "second message");
    const first = await sentIn(dmOf(OWNER));
    await sentIn(dmOf(OWNER), () => true, discord.calls.indexOf(first) + 1);
    expect(model.requests.map((r) => r.messages.at(-1)?.content.split("\n")[0])).toEqual(["only once", "second message"]);
  });

  it("delivers a scheduled reply to a user's DM and to a channel, recording the message ids", async () => {
    model.respond((req) => ({ text: `briefing for ${lastLine(req)}` }));
    const h = await start(
      {},
      {
        cron: {
          enabled: true,
          jobs: [
            { name: "dm", schedule: "0 7 * * *", prompt: "the owner", deliver: `discord:user:${OWNER}` },
            { name: "channel", schedule: "0 7 * * *", prompt: "the server", deliver: `discord:${GUILD_CHANNEL}` },
          ],
        },
      },
    );
    const firings = () => readDb(h.dbPath, (db) => db.prepare("SELECT job, status, message_id FROM firings ORDER BY rowid").all());
    expect((await h.cli(["schedules", "run", "dm"])).code).toBe(0);
    expect((await h.cli(["schedules", "run", "dm"])).code).toBe(0);
    expect((await h.cli(["schedules", "run", "channel"])).code).toBe(0);
    const toDm = discord.messagesIn(dmOf(OWNER));
    const toChannel = discord.messagesIn(GUILD_CHANNEL);
    expect(toDm.map((c) => c.body.content)).toEqual(["briefing for the owner", "briefing for the owner"]);
    expect(toChannel.map((c) => c.body.content)).toEqual(["briefing for the server"]);
    expect(discord.calls.filter((c) => c.method === "POST /users/@me/channels")).toHaveLength(1);
    expect(firings()).toEqual([
      { job: "dm", status: "ok", message_id: toDm[0]?.result.id },
      { job: "dm", status: "ok", message_id: toDm[1]?.result.id },
      { job: "channel", status: "ok", message_id: toChannel[0]?.result.id },
    ]);
  });
});
