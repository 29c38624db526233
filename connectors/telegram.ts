import { autoRetry } from "@grammyjs/auto-retry";
import { createConcurrentSink, createRunner, createSource, type RunnerHandle, sequentialize } from "@grammyjs/runner";
import { Bot, type Context, GrammyError } from "grammy";
import type { Message, Update } from "grammy/types";
import type { Config } from "../src/config/schema.js";
import type { Connector, ConnectorHealth, Core } from "../src/connector.js";
import { deadline, waitAtMost } from "../src/deadline.js";
import { DISK_FULL_MESSAGE, DiskFullError, TransportError } from "../src/errors.js";
import { matchSkillCommand, skillCommands, withSkill } from "../src/skills/commands.js";
import { Turns } from "../src/turns.js";
import { statusLines, strangerNoticeDue } from "./chat.js";
import { BUILTIN_COMMANDS, menuCommands, whoamiText } from "./commands.js";
import { addressedText } from "./telegram-address.js";
import { botApiFetch, retryWhileUnreachable } from "./telegram-network.js";
import { createPoller } from "./telegram-polling.js";
import { createChatRenderer, type RenderDeps, sendFormatted, showDecision } from "./telegram-render.js";
import { parseChannel, topicChannel, topicOf } from "./telegram-topics.js";

type TelegramConfig = Config["connectors"]["telegram"];

/** How long start-up waits for Telegram before serving without it, and how long one getMe attempt may take. */
const START_WAIT_MS = 3000;
const INIT_ATTEMPT_MS = 15_000;
/** Calls whose network failures surface at once: polling and getMe back off on their own; a typing indicator is only worth sending now. */
const NOT_RETRIED_ON_NETWORK_FAILURE = new Set(["getUpdates", "getMe", "sendChatAction"]);

/** The connector's own commands (the menu's and /start): a skill of the same name is not offered as one. */
const BUILT_IN = [...BUILTIN_COMMANDS.map((c) => c.name), "start"];

/** The owner's phone: a Telegram bot on grammY, long polling through @grammyjs/runner. */
export function createTelegramConnector(core: Core, cfg: TelegramConfig): Connector {
  const log = core.log.child({ connector: "telegram" });
  /** Aborted when the connector stops: ends waits for the network. */
  const life = new AbortController();
  const bot = new Bot(cfg.token, {
    client: {
      apiRoot: cfg.api_root.replace(/\/+$/, ""),
      timeoutSeconds: cfg.poll_timeout_s + 30,
      fetch: botApiFetch as unknown as typeof fetch,
    },
  });
  // auto-retry waits out 429s and 5xx and lets a network failure through; retryWhileUnreachable then
  // retries the call (a reply, an approval request) until it goes through.
  const autoRetried = autoRetry({ maxRetryAttempts: 5, maxDelaySeconds: 300, rethrowHttpErrors: true });
  const untilReachable = retryWhileUnreachable(life.signal, (method, err, pauseMs) =>
    log.warn({ method, err: err.message, pauseMs }, "telegram is not reachable; trying again"),
  );
  bot.api.config.use((prev, method, payload, signal) =>
    NOT_RETRIED_ON_NETWORK_FAILURE.has(method)
      ? autoRetried(prev, method, payload, signal)
      : untilReachable((m, p, s) => autoRetried(prev, m, p, s), method, payload, signal),
  );
  const diskFullNoticeAt = new Map<number, number>();
  /** Tells the owner's chats, at most every ten minutes, why their messages wait. */
  const onDiskFull = async (updates: Update[]) => {
    for (const chat of new Set(updates.flatMap((u) => (u.message && allowed(u.message.from?.id) ? [u.message.chat.id] : [])))) {
      if (Date.now() - (diskFullNoticeAt.get(chat) ?? 0) < 600_000) continue;
      diskFullNoticeAt.set(chat, Date.now());
      await bot.api
        .sendMessage(chat, `${DISK_FULL_MESSAGE} Your message is kept and will be answered once there is room.`)
        .catch((err: unknown) => log.warn({ err }, "could not tell a chat that the disk is full"));
    }
  };
  const poller = createPoller({ api: bot.api, store: core.store.inbound, log, pollTimeoutS: cfg.poll_timeout_s, onDiskFull });
  const renderDeps: RenderDeps = { api: bot.api, store: core.store, log, stream: cfg.stream_replies };
  const allowed = (id: number | undefined) => id !== undefined && core.config().connectors.telegram.allowed_users.includes(id);
  let runner: RunnerHandle | undefined;
  let started = false;
  /** A batch of updates is handled one update per pass of the event loop (see Turns). */
  const turns = new Turns();

  bot.use(sequentialize((ctx: Context) => ctx.chat?.id.toString()));
  bot.on("callback_query:data", (ctx) => onButton(ctx));
  bot.on("message:text", (ctx) => onMessage(ctx));
  bot.on("message", (ctx) => onOtherMessage(ctx));
  bot.catch((err) => log.error({ err: err.error, update: err.ctx.update.update_id }, "telegram update failed"));

  async function onMessage(ctx: Context): Promise<void> {
    const message = ctx.message as Message.TextMessage;
    const from = message.from;
    const updateId = ctx.update.update_id;
    const done = () => core.store.inbound.markDone("telegram", updateId);
    if (/^\/whoami(@\w+)?$/.test(message.text.trim())) {
      await ctx.reply(whoamiText("Telegram", from?.id, allowed(from?.id)));
      return done();
    }
    if (!allowed(from?.id)) {
      if (message.chat.type === "private" && from && (await offerPairing(ctx, from, message.text))) return done();
      await noticeStranger(ctx, from?.id);
      return done();
    }
    const text = addressedText(message, bot.botInfo);
    if (text === undefined) return done();
    const sessionKey = `telegram:${message.chat.id}`;
    const invoked = matchSkillCommand(core.skills?.(), text, BUILT_IN);
    if (invoked) return submitMessage(ctx, message, withSkill(invoked.skill, invoked.text));
    const command = text.match(/^\/(\w+)(@\w+)?\b/)?.[1];
    if (command) {
      await runCommand(ctx, command, sessionKey);
      return done();
    }
    await submitMessage(ctx, message, text);
  }

  /** Hands a message to the agent; the update is marked done in the transaction that records the run. */
  async function submitMessage(ctx: Context, message: Message, text: string, images?: string[]): Promise<void> {
    const sessionKey = `telegram:${message.chat.id}`;
    const threadId = topicOf(message);
    const listener = createChatRenderer(renderDeps, message.chat.id, threadId);
    const inbound = { connector: "telegram", id: ctx.update.update_id };
    const channel = topicChannel(sessionKey, threadId);
    const from = message.from;
    const sender = {
      id: `telegram:${from?.id}`,
      name: core.config().connectors.telegram.user_names[String(from?.id)] ?? from?.first_name ?? "",
    };
    const group = message.chat.type !== "private";
    let submitted: ReturnType<Core["submit"]>;
    try {
      submitted = core.submit({ sessionKey, text, source: "telegram", channel, listener, inbound, sender, group, images });
    } catch (err) {
      if (!(err instanceof DiskFullError)) throw err;
      await ctx.reply(err.message);
      return;
    }
    submitted.done.catch((err: unknown) => log.error({ err }, "telegram run failed"));
  }

  /** Voice notes, photos, files and everything else an allowed user sends: handled, or answered; never dropped in silence. */
  async function onOtherMessage(ctx: Context): Promise<void> {
    const message = ctx.message as Message;
    const done = () => core.store.inbound.markDone("telegram", ctx.update.update_id);
    if (!allowed(message.from?.id)) {
      await noticeStranger(ctx, message.from?.id);
      return done();
    }
    // Loaded at the first such message: a text-only chat never pays for the media code.
    const media = await import("./telegram-media.js");
    const mediaDeps = { api: bot.api, apiRoot: cfg.api_root, token: cfg.token, config: core.config, log };
    const outcome = await media.takeMessage(mediaDeps, message, bot.botInfo);
    if (outcome.type === "ignore") return done();
    if (outcome.type === "reply") {
      log.info({ chat: message.chat.id, reply: outcome.text.slice(0, 80) }, "telegram message answered without the model");
      await ctx.reply(outcome.text);
      return done();
    }
    if (outcome.echo) await ctx.reply(outcome.echo);
    await submitMessage(ctx, message, outcome.text, outcome.images);
  }

  async function runCommand(ctx: Context, command: string, sessionKey: string): Promise<void> {
    switch (command) {
      case "start":
      case "help":
        await ctx.reply(
          `Hi! I am hermes, your assistant on your home server. Just write to me.\n/new starts a fresh conversation, /compact summarises it so far, /stop stops what I am doing, /status shows whether everything works.\nYour Telegram id: ${ctx.from?.id}`,
        );
        return;
      case "new":
        core.newSession(sessionKey);
        await ctx.reply("Started a new conversation.");
        return;
      case "compact":
        await ctx.reply((await core.compact(sessionKey)).message);
        return;
      case "stop":
        await ctx.reply(core.stop(sessionKey) ? "Stopped." : "Nothing was running.");
        return;
      case "status":
        await ctx.reply(statusLines(await core.status()));
        return;
      default:
        await ctx.reply("I do not know that command. Try /help.");
    }
  }

  /** The user-invocable skills, after the built-in commands and under Telegram's limit of 100. */
  function skillMenu() {
    return skillCommands(core.skills?.(), "telegram", BUILT_IN).map((c) => ({ command: c.name, description: c.description }));
  }

  /** A stranger's message while `hermes pair telegram` waits for its code. */
  function offerPairing(ctx: Context, from: NonNullable<Message["from"]>, text: string): Promise<boolean> {
    const displayName = from.username ? `${from.first_name} (@${from.username})` : from.first_name;
    const reply = (t: string) => ctx.api.sendMessage(from.id, t);
    return core.pairings.offer({ connector: "telegram", userId: String(from.id), displayName, text, reply });
  }

  async function noticeStranger(ctx: Context, userId: number | undefined): Promise<void> {
    log.warn({ userId, chat: ctx.chat?.id }, "message from a user not in allowed_users ignored");
    if (userId === undefined || ctx.chat?.type !== "private") return;
    if (!strangerNoticeDue(core.store, "telegram", userId)) return;
    await ctx.reply(
      `This is a private assistant. Your Telegram id is ${userId}; the owner can add it to connectors.telegram.allowed_users.`,
    );
  }

  async function onButton(ctx: Context): Promise<void> {
    const query = ctx.callbackQuery;
    const match = query?.data?.match(/^([ad]):(.+)$/);
    core.store.inbound.markDone("telegram", ctx.update.update_id);
    if (!query || !match) return void (await ctx.answerCallbackQuery());
    if (!allowed(query.from.id)) {
      log.warn({ userId: query.from.id, approvalId: match[2] }, "approval button pressed by a user not in allowed_users; ignored");
      await ctx.answerCallbackQuery({ text: "Only the owner can decide this." });
      return;
    }
    const who = query.from.username ? `@${query.from.username}` : `${query.from.first_name} (${query.from.id})`;
    const result = core.decide(match[2] as string, match[1] === "a", `telegram:${who}`);
    await ctx.answerCallbackQuery({ text: result.ok ? result.message : result.message.slice(0, 190) });
    if (!result.ok && result.approval && result.approval.status !== "pending") {
      await showDecision(renderDeps, result.approval.id, result.approval.status, result.approval.decided_by ?? "");
    }
  }

  let initialized: Promise<boolean> | undefined;
  let ready = false;
  let unreachable: string | undefined;
  let initRetry: NodeJS.Timeout | undefined;
  /**
   * getMe, then the replay of unfinished updates (and the command menu). An attempt gives up after INIT_ATTEMPT_MS
   * (grammY's auto-retry would wait for the network for an hour); the next update or the background
   * retry tries again.
   */
  function ensureInit(): Promise<boolean> {
    if (initialized) return initialized;
    const limit = deadline(life.signal, INIT_ATTEMPT_MS);
    initialized = init(limit.signal)
      .catch((err: unknown) => {
        initialized = undefined;
        unreachable = (err as Error).message;
        if (!life.signal.aborted) log.warn({ err }, "telegram is not reachable yet; will retry");
        return false;
      })
      .finally(limit.dispose);
    return initialized;
  }

  async function init(signal: AbortSignal): Promise<boolean> {
    try {
      await bot.init(signal as never);
    } catch (err) {
      if (err instanceof GrammyError && err.error_code === 401) {
        const message = "Telegram rejected the bot token (401): set TELEGRAM_BOT_TOKEN to the token from @BotFather";
        poller.setFatal(message);
        log.error(message);
        return false;
      }
      throw err;
    }
    // The command menu is cosmetic: set in the background, so start-up does not wait one more round trip.
    const menu = [...menuCommands(256).map((c) => ({ command: c.name, description: c.description })), ...skillMenu()];
    void bot.api.setMyCommands(menu, undefined, life.signal as never).catch((err: unknown) => {
      if (!life.signal.aborted) log.warn({ err }, "setMyCommands failed");
    });
    ready = true;
    unreachable = undefined;
    for (const update of core.store.inbound.unfinished<Update>("telegram")) {
      log.info({ update: update.update_id }, "handling an update received before a restart");
      await bot.handleUpdate(update).catch((err: unknown) => log.error({ err }, "replayed update failed"));
    }
    return true;
  }

  /** Keeps trying to initialise while Telegram is unreachable (5 s, doubling to 5 min), so replays do not wait for a new message. */
  function initUntilDone(attempt: number): Promise<void> {
    return ensureInit().then((ok) => {
      if (ok || ready || life.signal.aborted || poller.health().needsOwner) return;
      initRetry = setTimeout(() => void initUntilDone(attempt + 1), Math.min(300_000, 5000 * 2 ** attempt));
    });
  }

  async function consume(update: Update): Promise<void> {
    if (!(await ensureInit())) throw new TransportError("telegram", `update ${update.update_id} kept for later: Telegram is not reachable`);
    await turns.next();
    await bot.handleUpdate(update);
  }

  return {
    name: "telegram",
    /** Polling starts at once; a Telegram that cannot be reached yet (no network at boot) does not hold up the daemon. */
    async start() {
      await waitAtMost(initUntilDone(0), START_WAIT_MS);
      const sink = createConcurrentSink<Update>({ consume }, async (err) => {
        log.error({ err }, "telegram update failed");
      });
      runner = createRunner(createSource(poller.supplier), sink);
      runner.start();
      started = true;
    },
    async stop() {
      life.abort();
      clearTimeout(initRetry);
      if (runner?.isRunning()) await runner.stop();
    },
    health(): ConnectorHealth {
      if (!started) return { ok: false, detail: "not started" };
      if (!runner?.isRunning()) return { ok: false, detail: "the poller stopped" };
      const polling = poller.health();
      if (ready || polling.needsOwner) return polling;
      return { ...polling, detail: `Telegram not reachable yet${unreachable ? ` (${unreachable})` : ""}; retrying` };
    },
    async deliver(target, text) {
      const { chatId, threadId } = parseChannel(target);
      try {
        const ids = await sendFormatted(bot.api, chatId, text, log, threadId);
        return { messageId: String(ids[0]) };
      } catch (err) {
        throw new TransportError("telegram", `could not deliver to ${target}: ${(err as Error).message}`, { cause: err });
      }
    },
    listenerFor(channel) {
      const { chatId, threadId } = parseChannel(channel);
      return Number.isFinite(chatId) ? createChatRenderer({ ...renderDeps, stream: false }, chatId, threadId) : undefined;
    },
  };
}
