import { autoRetry } from "@grammyjs/auto-retry";
import { createConcurrentSink, createRunner, createSource, type RunnerHandle, sequentialize } from "@grammyjs/runner";
import { Bot, type Context, GrammyError } from "grammy";
import type { Message, Update } from "grammy/types";
import type { Config } from "../../src/config/schema.js";
import type { Connector, ConnectorHealth, Core } from "../../src/connector.js";
import { deadline, waitAtMost } from "../../src/deadline.js";
import { DISK_FULL_MESSAGE, TransportError } from "../../src/errors.js";
import { Turns } from "../../src/turns.js";
import { skillMenu } from "../chat/commands.js";
import { createChatFlow } from "../chat/flow.js";
import { menuCommands } from "../chat/menu.js";
import { addressedText } from "./address.js";
import { botApiFetch, retryWhileUnreachable } from "./network.js";
import { createPoller } from "./polling.js";
import { telegramSurface } from "./surface.js";
import { topicChannel, topicOf } from "./topics.js";

type TelegramConfig = Config["connectors"]["telegram"];

/** How long start-up waits for Telegram before serving without it, and how long one getMe attempt may take. */
const START_WAIT_MS = 3000;
const INIT_ATTEMPT_MS = 15_000;
/** Calls whose network failures surface at once: polling and getMe back off on their own; a typing indicator is only worth sending now. */
const NOT_RETRIED_ON_NETWORK_FAILURE = new Set(["getUpdates", "getMe", "sendChatAction"]);

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
  const allowed = (id: number | undefined) => id !== undefined && core.config().connectors.telegram.allowed_users.includes(id);
  const flow = createChatFlow({
    core,
    name: "telegram",
    surface: telegramSurface(bot.api, log),
    allowed: (user) => allowed(Number(user)),
    allowlistHome: "connectors.telegram",
    log,
    onFault: (what, err) => log.warn({ err, what }, "telegram send failed"),
    onSuccess: () => {},
    stream: cfg.stream_replies,
    platform: "Telegram",
    pairing: "telegram",
    quietInGroups: true,
    texts: {
      help: (user) =>
        `Hi! I am hermes, your assistant on your home server. Just write to me.\n/new starts a fresh conversation, /compact summarises it so far, /stop stops what I am doing, /status shows whether everything works.\nYour Telegram id: ${user}`,
      stranger: (user) =>
        `This is a private assistant. Your Telegram id is ${user}; the owner can add it to connectors.telegram.allowed_users.`,
    },
  });
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
  const poller = createPoller({ api: bot.api, store: flow.journal, log, pollTimeoutS: cfg.poll_timeout_s, onDiskFull });
  let runner: RunnerHandle | undefined;
  let started = false;
  /** A batch of updates is handled one update per pass of the event loop (see Turns). */
  const turns = new Turns();

  bot.use(sequentialize((ctx: Context) => ctx.chat?.id.toString()));
  bot.on("callback_query:data", (ctx) => onButton(ctx));
  bot.on("message:text", (ctx) => onMessage(ctx, ctx.message.text));
  bot.on("message", (ctx) => onMessage(ctx, ""));
  // An update no handler takes (an edited message an older version asked for, replayed from the journal at
  // each start) is done with: marked so, its payload dropped.
  bot.use((ctx) => flow.journal.markDone("telegram", ctx.update.update_id));
  bot.catch((err) => log.error({ err: err.error, update: err.ctx.update.update_id }, "telegram update failed"));

  /**
   * A message as the chat core takes it: its chat (with the forum topic replies go to), whether it is meant
   * for the bot in a group, and for anything but text the media hand-off (loaded at the first such message).
   */
  async function onMessage(ctx: Context, text: string): Promise<void> {
    const message = ctx.message as Message;
    const from = message.from;
    const chat = topicChannel(String(message.chat.id), topicOf(message));
    const user = String(from?.id);
    const addressed = message.text === undefined ? text : addressedText(message as Message.TextMessage, bot.botInfo);
    await flow.receiveChat({
      chat,
      sessionChat: String(message.chat.id),
      user,
      text: addressed ?? text,
      addressed: addressed !== undefined,
      group: message.chat.type !== "private",
      userName: core.config().connectors.telegram.user_names[user] ?? from?.first_name ?? "",
      ...(from && { pairingName: from.username ? `${from.first_name} (@${from.username})` : from.first_name }),
      journalId: ctx.update.update_id,
      ...(message.text === undefined && { intake: () => takeMedia(message) }),
    });
  }

  async function takeMedia(message: Message) {
    const media = await import("./media.js");
    const outcome = await media.takeMessage(
      { api: bot.api, apiRoot: cfg.api_root, token: cfg.token, config: core.config, log },
      message,
      bot.botInfo,
    );
    if (outcome.type === "reply")
      log.info({ chat: message.chat.id, reply: outcome.text.slice(0, 80) }, "telegram message answered without the model");
    return outcome;
  }

  async function onButton(ctx: Context): Promise<void> {
    const query = ctx.callbackQuery;
    flow.journal.markDone("telegram", ctx.update.update_id);
    if (!query?.data) return void (await ctx.answerCallbackQuery());
    const by = query.from.username ? `@${query.from.username}` : `${query.from.first_name} (${query.from.id})`;
    const press = { chat: String(query.message?.chat.id ?? query.from.id), user: String(query.from.id), button: query.data, by };
    await flow.press(press, (answer) =>
      ctx.answerCallbackQuery(answer.kind === "unknown" ? undefined : { text: answer.text.slice(0, 190) }),
    );
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
    sendMenu();
    ready = true;
    unreachable = undefined;
    for (const update of flow.journal.unfinished<Update>("telegram")) {
      // One the poller brought and is waiting for this initialisation is handled there, not twice.
      if (polled.has(update.update_id)) continue;
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

  /** Updates the poller brought that are waiting for the initialisation: its replay leaves them to consume. */
  const polled = new Set<number>();

  async function consume(update: Update): Promise<void> {
    polled.add(update.update_id);
    try {
      if (!(await ensureInit()))
        throw new TransportError("telegram", `update ${update.update_id} kept for later: Telegram is not reachable`);
    } finally {
      polled.delete(update.update_id);
    }
    await turns.next();
    await bot.handleUpdate(update);
  }

  /** The menu as last sent, so that a reload sends it only when its skills changed. */
  let sentMenu = "";
  /** The command menu is cosmetic: set in the background, so start-up does not wait one more round trip. */
  function sendMenu(): void {
    const menu = [...menuCommands(256), ...skillMenu(core, "telegram")].map((c) => ({ command: c.name, description: c.description }));
    const text = JSON.stringify(menu);
    if (text === sentMenu) return;
    sentMenu = text;
    void bot.api.setMyCommands(menu, undefined, life.signal as never).catch((err: unknown) => {
      sentMenu = "";
      if (!life.signal.aborted) log.warn({ err }, "setMyCommands failed");
    });
  }

  return {
    name: "telegram",
    /** A reload may have changed the skills: the menu follows them. */
    reload() {
      if (ready) sendMenu();
    },
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
    deliver: (target, text) => flow.deliver(target, text),
    listenerFor: (channel, replyTo) => flow.listenerFor(channel, replyTo),
  };
}
