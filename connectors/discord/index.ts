import {
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  Client,
  Events,
  GatewayIntentBits,
  type Interaction,
  type Message,
  MessageFlags,
  Partials,
  RateLimitError,
  REST,
  Routes,
} from "discord.js";
import type { Config } from "../../src/config/schema.js";
import type { Connector, ConnectorHealth, Core } from "../../src/connector.js";
import { waitAtMost } from "../../src/deadline.js";
import { skillMenu } from "../chat/commands.js";
import { createChatFlow } from "../chat/flow.js";
import { menuCommands } from "../chat/menu.js";
import type { ChatMessage, CommandAnswer, PressAnswer } from "../chat/types.js";
import type { AttachmentInfo } from "./media.js";
import { DISCORD_LIMIT, discordSurface } from "./surface.js";

type DiscordConfig = Config["connectors"]["discord"];

const INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.DirectMessages,
  GatewayIntentBits.MessageContent,
];
const HELP =
  "Hi! I am hermes, your assistant on your home server. Write to me in a DM, or mention me in a channel.\n/new starts a fresh conversation, /compact summarises it so far, /stop stops what I am doing, /status shows whether everything works.";
/** How long `start` waits for the gateway before letting the daemon go on (it keeps connecting). */
const START_WAIT_MS = 5000;
const RETRY_MIN_MS = 5000;
const RETRY_MAX_MS = 300_000;
/** Not connected for this long is unhealthy: red in status (and, with no attempt under way, for the watchdog). */
const UNHEALTHY_AFTER_MS = 120_000;
/**
 * Attempts to reach the gateway end and are made again (discord.js' own, and a login's every RETRY_MAX_MS
 * at most): while the last one is this recent, a connection that is still down is an outage to wait out,
 * not a hung client, and the systemd watchdog keeps being pinged. Restarting hermes would not bring the
 * network back, and would interrupt every other connector's runs meanwhile.
 */
const ATTEMPTS_STALL_AFTER_MS = RETRY_MAX_MS + 60_000;

const TOKEN_FIX =
  "Discord rejected the bot token: set DISCORD_BOT_TOKEN to the token from the Developer Portal (your application → Bot → Reset Token)";
const INTENT_FIX =
  "Discord refused the privileged Message Content intent: enable MESSAGE CONTENT INTENT in the Developer Portal (your application → Bot → Privileged Gateway Intents), then restart hermes";

type Failure = { code?: unknown; status?: number; message?: string };

/**
 * The owner's fix for a failure no retry can mend: a rejected token (login 401, gateway close 4004)
 * or a privileged intent not enabled (gateway close 4014). Undefined for anything that may pass.
 */
function ownerFix(e: Failure): string | undefined {
  const message = e.message ?? "";
  if (e.code === "TokenInvalid" || e.code === 4004 || e.status === 401 || /authentication failed/i.test(message)) return TOKEN_FIX;
  if (e.code === 4014 || /disallowed intents/i.test(message)) return INTENT_FIX;
  return undefined;
}

/** What a received message is reduced to before it is recorded: enough to replay it after a crash. */
interface Inbound {
  id: string;
  channel: string;
  user: string;
  /** The author's display name, and whether the message came from a guild channel (not a DM). */
  name?: string;
  guild?: boolean;
  text: string;
  /** Files the message carries (see media.ts). */
  attachments?: AttachmentInfo[];
  /** What the message carries that hermes cannot use yet (stickers, a poll), in words. */
  unusable?: string;
}

/**
 * Discord on discord.js: DMs from allowed users and mentions in guild channels, approval buttons,
 * replies split under 2000 characters. Sends go through one REST client that works whether or not the
 * gateway is connected; the gateway client is rebuilt when a login fails for a reason that may pass.
 */
export function createDiscordConnector(core: Core, cfg: DiscordConfig): Connector {
  const log = core.log.child({ connector: "discord" });
  const api = cfg.api_root.replace(/\/+$/, "");
  const rest = new REST({ api }).setToken(cfg.token);
  const flow = createChatFlow({
    core,
    name: "discord",
    surface: discordSurface(rest, () => flow.journal, new REST({ api, rejectOnRateLimit: () => true }).setToken(cfg.token)),
    allowed: (id) => core.config().connectors.discord.allowed_users.includes(id),
    allowlistHome: "connectors.discord",
    log,
    onFault: (what, err) =>
      // Typing is given up on a rate limit by design (the reply must not wait behind it): nothing failed.
      what === "typing" && err instanceof RateLimitError
        ? log.debug({ what, retryAfterMs: err.retryAfter }, "typing indicator skipped: Discord rate limit")
        : log.warn({ err, what }, "discord send failed"),
    onSuccess: () => {},
    stream: cfg.stream_replies,
    platform: "Discord",
    // A stranger who mentions the bot in a server channel is logged, not answered there for all to read (a
    // DM gets the notice with their id), as in Telegram's groups.
    quietInGroups: true,
    pairing: "discord",
    texts: {
      help: () => HELP,
      stranger: (user) =>
        `This is a private assistant. Your Discord id is ${user}; the owner can add it to connectors.discord.allowed_users.`,
    },
  });
  let client: Client | undefined;
  let fatal: string | undefined;
  let stopped = false;
  let started = false;
  let ready = false;
  let downSince = Date.now();
  let reconnects = 0;
  let lastProblem = "";
  /** When an attempt to reach the gateway last began or ended (see ATTEMPTS_STALL_AFTER_MS). */
  let lastAttemptAt = Date.now();
  let retryMs = RETRY_MIN_MS;
  let retryTimer: NodeJS.Timeout | undefined;

  const setFatal = (message: string) => {
    if (fatal) return;
    fatal = message;
    ready = false;
    log.error(message);
  };

  function connect(): Promise<void> {
    lastAttemptAt = Date.now();
    const c = new Client({ intents: INTENTS, partials: [Partials.Channel], rest: { api } });
    client = c;
    c.on(Events.MessageCreate, (m) => inOrder(m.channelId, () => onMessage(c, m), m.id));
    c.on(Events.InteractionCreate, (i) => void onInteraction(i).catch((err: unknown) => log.error({ err }, "discord interaction failed")));
    c.on(Events.ClientReady, (me) => {
      ready = true;
      retryMs = RETRY_MIN_MS;
      log.info({ user: me.user.tag, guilds: me.guilds.cache.size }, "discord gateway ready");
      void registerCommands(me.application.id);
      replayUnfinished();
    });
    c.on(Events.ShardResume, () => {
      ready = true;
      log.info("discord gateway resumed");
    });
    c.on(Events.ShardReady, () => {
      ready = true;
    });
    c.on(Events.ShardReconnecting, () => {
      lastAttemptAt = Date.now();
      if (!ready) return; // while the gateway is unreachable each attempt fires this; say it once
      ready = false;
      downSince = Date.now();
      reconnects++;
      log.warn({ reconnects }, "discord gateway connection lost; reconnecting");
    });
    c.on(Events.ShardDisconnect, (event) => {
      ready = false;
      downSince = Date.now();
      setFatal(ownerFix(event) ?? `Discord closed the gateway for good (code ${event.code}); restart hermes once that is fixed`);
    });
    c.on(Events.ShardError, (err) => {
      lastAttemptAt = Date.now();
      lastProblem = err.message;
      log.warn({ err }, "discord gateway error");
    });
    c.on(Events.Error, (err) => log.error({ err }, "discord client error"));
    c.on(Events.Warn, (message) => log.warn({ detail: message }, "discord warning"));
    return c.login(cfg.token).then(
      () => undefined,
      (err: unknown) => onLoginFailure(c, err),
    );
  }

  function onLoginFailure(c: Client, err: unknown): void {
    if (client === c) client = undefined;
    const fix = ownerFix(err as Failure);
    if (fix) {
      setFatal(fix);
      return;
    }
    lastProblem = (err as Failure).message ?? String(err);
    lastAttemptAt = Date.now();
    if (stopped) return;
    log.warn({ err, retryInS: retryMs / 1000 }, "could not connect to Discord; will retry");
    retryTimer = setTimeout(() => void connect(), retryMs);
    retryTimer.unref();
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  }

  /** The application whose commands were registered, and the commands as last sent (a reload sends changed ones). */
  let application: string | undefined;
  let registered = "";
  async function registerCommands(applicationId: string): Promise<void> {
    application = applicationId;
    const text = { type: 3, name: "text", description: "What to do with the skill", required: false };
    const skills = skillMenu(core, "discord").map((c) => ({ ...c, options: [text] }));
    const body = [...menuCommands(100), ...skills];
    const sent = JSON.stringify(body);
    if (sent === registered) return;
    registered = sent;
    try {
      await rest.put(Routes.applicationCommands(applicationId), { body });
    } catch (err) {
      registered = "";
      log.warn({ err }, "registering the slash commands failed; the text commands still work");
    }
  }

  /** Each channel's messages, taken one after the other (as Telegram's chats are): the tail of each channel's queue. */
  const lanes = new Map<string, Promise<void>>();

  /**
   * Takes a channel's messages in the order they came: a file's download no longer lets the text sent after
   * it reach the model first ("here are my notes", then "now summarise them"). Only the taking waits: a run
   * goes on in the background once it is submitted.
   */
  function inOrder(channel: string, take: () => Promise<void>, id: string): void {
    const next = (lanes.get(channel) ?? Promise.resolve())
      .then(take)
      .catch((err: unknown) => log.error({ err, message: id }, "discord message failed"));
    lanes.set(channel, next);
    void next.finally(() => {
      if (lanes.get(channel) === next) lanes.delete(channel);
    });
  }

  async function onMessage(c: Client, message: Message): Promise<void> {
    if (message.author.bot || message.webhookId || !c.user) return;
    // A system message (a pin, a call, a thread made) is no one's words: not answered.
    if (message.system) return;
    const isDm = message.guildId === null;
    if (!isDm && !message.mentions.users.has(c.user.id)) return;
    const own = isDm ? message.content.trim() : message.content.replace(new RegExp(`<@!?${c.user.id}>`, "g"), "").trim();
    // A forwarded message has no content of its own: what was forwarded is its snapshot's.
    const forwarded = own ? "" : (message.messageSnapshots?.first()?.content?.trim() ?? "");
    const onlyEmbeds = !own && !forwarded && message.embeds.length > 0 && message.attachments.size === 0;
    const inbound: Inbound = {
      id: message.id,
      channel: message.channelId,
      user: message.author.id,
      name: message.member?.displayName ?? message.author.globalName ?? message.author.username,
      guild: !isDm,
      text: own || (forwarded && `[forwarded message] ${forwarded}`),
      ...(message.attachments.size > 0 && {
        attachments: [...message.attachments.values()].map((a) => ({
          url: a.url,
          name: a.name,
          contentType: a.contentType ?? "",
          size: a.size,
          ...(a.duration !== null && { durationS: a.duration }),
        })),
      }),
      ...((message.stickers.size > 0 || message.poll || onlyEmbeds) && {
        unusable: message.poll ? "polls" : message.stickers.size > 0 ? "stickers" : "embeds",
      }),
    };
    const record = () => {
      const fresh = flow.journal.recordOne("discord", BigInt(inbound.id), inbound.channel, inbound);
      if (!fresh) log.info({ message: inbound.id }, "discord message seen before; ignored");
      return fresh;
    };
    await flow.receiveChat({ ...chatMessage(inbound), record });
  }

  /** A recorded message as the chat core takes it; its files are fetched once its sender is known to be allowed. */
  function chatMessage(m: Inbound): ChatMessage {
    const { attachments, unusable } = m;
    return {
      chat: m.channel,
      user: m.user,
      text: m.text,
      userName: core.config().connectors.discord.user_names[m.user] ?? m.name ?? m.user,
      ...(m.guild && { group: true }),
      journalId: BigInt(m.id),
      ...((attachments?.length || unusable) && {
        intake: async (text: string) => {
          // Loaded at the first attachment: a text-only chat never pays for the media code.
          if (attachments?.length) return (await import("./media.js")).takeAttachments(core.config(), attachments, text);
          if (text) return { type: "message" as const, text };
          return { type: "reply" as const, text: `I can't use ${unusable} yet. Send me text, a voice note, a photo or a file.` };
        },
      }),
    };
  }

  function replayUnfinished(): void {
    for (const m of flow.journal.unfinished<Inbound>("discord")) {
      log.info({ message: m.id }, "handling a message received before a restart");
      flow.receiveChat(chatMessage(m)).catch((err: unknown) => log.error({ err }, "replayed message failed"));
    }
  }

  async function onInteraction(interaction: Interaction): Promise<void> {
    if (interaction.isButton()) return onButton(interaction);
    if (interaction.isChatInputCommand()) return onSlash(interaction);
  }

  async function onButton(interaction: ButtonInteraction): Promise<void> {
    const press = { chat: interaction.channelId, user: interaction.user.id, button: interaction.customId, by: interaction.user.username };
    await flow.press(press, (answer: PressAnswer) => {
      if (answer.kind === "unknown") return interaction.deferUpdate();
      if (answer.kind === "decided") return interaction.update({ content: answer.shown, components: [] });
      return interaction.reply({ content: answer.text.slice(0, DISCORD_LIMIT), flags: MessageFlags.Ephemeral });
    });
  }

  /** A slash command: Discord wants its first answer within 3 s, so a slow one is deferred and edited. */
  async function onSlash(interaction: ChatInputCommandInteraction): Promise<void> {
    const typed = `/${interaction.commandName} ${interaction.options.getString("text") ?? ""}`.trim();
    const user = interaction.user;
    const message: ChatMessage = {
      chat: interaction.channelId,
      user: user.id,
      text: typed,
      userName: core.config().connectors.discord.user_names[user.id] ?? user.globalName ?? user.username,
      ...(interaction.guildId !== null && { group: true }),
    };
    await flow.command(message, (answer: CommandAnswer) => {
      if (answer.kind === "slow") return interaction.deferReply();
      if (answer.kind === "run") return interaction.reply({ content: typed.slice(0, DISCORD_LIMIT) });
      const content = answer.text.slice(0, DISCORD_LIMIT);
      if (answer.onlySender) return interaction.reply({ content, flags: MessageFlags.Ephemeral });
      return interaction.deferred ? interaction.editReply({ content }) : interaction.reply({ content });
    });
  }

  return {
    name: "discord",
    /** A reload may have changed the skills: the slash commands follow them. */
    reload() {
      if (application) void registerCommands(application);
    },
    async start() {
      started = true;
      await waitAtMost(connect(), START_WAIT_MS);
      if (!ready && !fatal) log.warn("the Discord gateway is not ready yet; still connecting");
    },
    async stop() {
      stopped = true;
      clearTimeout(retryTimer);
      await client?.destroy().catch((err: unknown) => log.warn({ err }, "closing the Discord gateway failed"));
    },
    health(): ConnectorHealth {
      if (fatal) return { ok: false, detail: fatal, needsOwner: true };
      if (!started) return { ok: false, detail: "not started" };
      const again = reconnects ? `; reconnected ${reconnects}×` : "";
      if (ready) return { ok: true, detail: `connected as ${client?.user?.tag ?? "?"}, ping ${client?.ws.ping ?? -1} ms${again}` };
      const down = Date.now() - downSince;
      const why = lastProblem ? ` (${lastProblem})` : "";
      const detail = `connecting to the gateway for ${Math.round(down / 1000)} s${why}${again}`;
      if (down < UNHEALTHY_AFTER_MS) return { ok: true, detail };
      return { ok: false, detail, retrying: Date.now() - lastAttemptAt < ATTEMPTS_STALL_AFTER_MS };
    },
    deliver: (target, text) => flow.deliver(target, text),
    listenerFor: (channel, replyTo) => flow.listenerFor(channel, replyTo),
  };
}
