import {
  type APIChannel,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  Client,
  Events,
  GatewayIntentBits,
  type Interaction,
  type Message,
  MessageFlags,
  Partials,
  REST,
  Routes,
} from "discord.js";
import type { Config } from "../src/config/schema.js";
import type { Connector, ConnectorHealth, Core } from "../src/connector.js";
import { waitAtMost } from "../src/deadline.js";
import { DiskFullError, isDiskFull, TransportError } from "../src/errors.js";
import { menuCommands, whoamiText } from "./chat/menu.js";
import { statusLines, strangerNoticeDue } from "./chat/texts.js";
import type { AttachmentInfo } from "./discord-media.js";
import { createChannelRenderer, type DiscordDeps, decidedContent, sendText, showDecision } from "./discord-render.js";
import { runSkillCommand, skillMenu, skillText } from "./discord-skills.js";

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
/** Not connected for this long is unhealthy (the watchdog may restart the daemon). */
const UNHEALTHY_AFTER_MS = 120_000;
const RETRY_MIN_MS = 5000;
const RETRY_MAX_MS = 300_000;

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
  /** Files the message carries (see discord-media.ts). */
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
  const deps: DiscordDeps = { rest, store: core.store, log };
  const allowed = (id: string) => core.config().connectors.discord.allowed_users.includes(id);
  let client: Client | undefined;
  let fatal: string | undefined;
  let stopped = false;
  let started = false;
  let ready = false;
  let downSince = Date.now();
  let reconnects = 0;
  let lastProblem = "";
  let retryMs = RETRY_MIN_MS;
  let retryTimer: NodeJS.Timeout | undefined;

  const setFatal = (message: string) => {
    if (fatal) return;
    fatal = message;
    ready = false;
    log.error(message);
  };

  function connect(): Promise<void> {
    const c = new Client({ intents: INTENTS, partials: [Partials.Channel], rest: { api } });
    client = c;
    c.on(
      Events.MessageCreate,
      (m) => void onMessage(c, m).catch((err: unknown) => log.error({ err, message: m.id }, "discord message failed")),
    );
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
    if (stopped) return;
    log.warn({ err, retryInS: retryMs / 1000 }, "could not connect to Discord; will retry");
    retryTimer = setTimeout(() => void connect(), retryMs);
    retryTimer.unref();
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  }

  async function registerCommands(applicationId: string): Promise<void> {
    try {
      await rest.put(Routes.applicationCommands(applicationId), { body: [...menuCommands(100), ...skillMenu(core)] });
    } catch (err) {
      log.warn({ err }, "registering the slash commands failed; the text commands still work");
    }
  }

  async function onMessage(c: Client, message: Message): Promise<void> {
    if (message.author.bot || message.webhookId || !c.user) return;
    const isDm = message.guildId === null;
    const mentioned = message.mentions.users.has(c.user.id);
    if (!isDm && !mentioned) return;
    const inbound: Inbound = {
      id: message.id,
      channel: message.channelId,
      user: message.author.id,
      name: message.member?.displayName ?? message.author.globalName ?? message.author.username,
      guild: !isDm,
      text: isDm ? message.content.trim() : message.content.replace(new RegExp(`<@!?${c.user.id}>`, "g"), "").trim(),
      ...(message.attachments.size > 0 && {
        attachments: [...message.attachments.values()].map((a) => ({
          url: a.url,
          name: a.name,
          contentType: a.contentType ?? "",
          size: a.size,
          ...(a.duration !== null && { durationS: a.duration }),
        })),
      }),
      ...((message.stickers.size > 0 || message.poll) && { unusable: message.poll ? "polls" : "stickers" }),
    };
    if (/^\/whoami$/.test(inbound.text)) {
      await sendText(rest, inbound.channel, whoamiText("Discord", inbound.user, allowed(inbound.user)));
      return;
    }
    if (!allowed(inbound.user)) {
      const reply = (text: string) => sendText(rest, inbound.channel, text);
      const offer = {
        connector: "discord" as const,
        userId: inbound.user,
        displayName: inbound.name ?? inbound.user,
        text: inbound.text,
        reply,
      };
      if (isDm && (await core.pairings.offer(offer))) return;
      log.warn({ userId: inbound.user, channel: inbound.channel }, "message from a user not in allowed_users ignored");
      if (strangerNoticeDue(core.store, "discord", inbound.user)) {
        await sendText(
          rest,
          inbound.channel,
          `This is a private assistant. Your Discord id is ${inbound.user}; the owner can add it to connectors.discord.allowed_users.`,
        );
      }
      return;
    }
    try {
      if (!core.store.inbound.recordOne("discord", BigInt(inbound.id), inbound.channel, inbound)) {
        log.info({ message: inbound.id }, "discord message seen before; ignored");
        return;
      }
      await handle(inbound);
    } catch (err) {
      if (!isDiskFull(err)) throw err;
      log.error({ err, message: inbound.id }, "the disk is full: a Discord message could not be recorded");
      await sendText(rest, inbound.channel, new DiskFullError().message);
    }
  }

  /** Hands a recorded message to the agent (or runs its command) and marks it done. */
  async function handle(m: Inbound): Promise<void> {
    const done = () => core.store.inbound.markDone("discord", BigInt(m.id));
    const sessionKey = `discord:${m.channel}`;
    const skilled = skillText(core, m.text);
    const command = skilled === undefined ? m.text.match(/^\/(new|compact|stop|status|help|start)\b/)?.[1] : undefined;
    if (command) {
      done();
      await sendText(rest, m.channel, await runCommand(command, sessionKey));
      return;
    }
    let text = skilled ?? m.text;
    let images: string[] | undefined;
    if (m.attachments?.length) {
      // Loaded at the first attachment: a text-only chat never pays for the media code.
      const outcome = await (await import("./discord-media.js")).takeAttachments(core.config(), m.attachments, text);
      if (outcome.type === "reply") {
        done();
        await sendText(rest, m.channel, outcome.text);
        return;
      }
      if (outcome.echo) await sendText(rest, m.channel, outcome.echo);
      ({ text, images } = outcome);
    }
    if (!text && m.unusable) {
      done();
      await sendText(rest, m.channel, `I can't use ${m.unusable} yet. Send me text, a voice note, a photo or a file.`);
      return;
    }
    if (!text) return done();
    const listener = createChannelRenderer({ ...deps, stream: cfg.stream_replies }, async () => m.channel);
    const inbound = { connector: "discord", id: BigInt(m.id) };
    const sender = { id: `discord:${m.user}`, name: core.config().connectors.discord.user_names[m.user] ?? m.name ?? m.user };
    const submitted = core.submit({
      sessionKey,
      text,
      source: "discord",
      channel: sessionKey,
      listener,
      inbound,
      sender,
      group: m.guild,
      images,
    });
    submitted.done.catch((err: unknown) => log.error({ err }, "discord run failed"));
  }

  async function runCommand(command: string, sessionKey: string): Promise<string> {
    switch (command) {
      case "new":
        core.newSession(sessionKey);
        return "Started a new conversation.";
      case "compact":
        return (await core.compact(sessionKey)).message;
      case "stop":
        return core.stop(sessionKey) ? "Stopped." : "Nothing was running.";
      case "status":
        return statusLines(await core.status());
      default:
        return HELP;
    }
  }

  function replayUnfinished(): void {
    for (const m of core.store.inbound.unfinished<Inbound>("discord")) {
      log.info({ message: m.id }, "handling a message received before a restart");
      handle(m).catch((err: unknown) => log.error({ err }, "replayed message failed"));
    }
  }

  async function onInteraction(interaction: Interaction): Promise<void> {
    if (interaction.isButton()) return onButton(interaction);
    if (interaction.isChatInputCommand()) return onSlash(interaction);
  }

  async function onButton(interaction: ButtonInteraction): Promise<void> {
    const match = interaction.customId.match(/^([ad]):(.+)$/);
    if (!match) return void (await interaction.deferUpdate());
    const approvalId = match[2] as string;
    const user = interaction.user;
    if (!allowed(user.id)) {
      log.warn({ userId: user.id, approvalId }, "approval button pressed by a user not in allowed_users; ignored");
      await interaction.reply({ content: "Only the owner can decide this.", flags: MessageFlags.Ephemeral });
      return;
    }
    const by = `discord:${user.username}`;
    const result = core.decide(approvalId, match[1] === "a", by);
    if (result.ok) {
      const content = decidedContent(deps, approvalId, result.approval.status as "approved" | "denied", by);
      await interaction.update({ content, components: [] });
      return;
    }
    await interaction.reply({ content: result.message.slice(0, 2000), flags: MessageFlags.Ephemeral });
    const decided = result.approval;
    if (decided && decided.status !== "pending") {
      await showDecision(deps, decided.id, decided.status as "approved" | "denied" | "expired", decided.decided_by ?? "").catch(
        (err: unknown) => log.warn({ err }, "could not update a decided approval message"),
      );
    }
  }

  async function onSlash(interaction: ChatInputCommandInteraction): Promise<void> {
    if (interaction.commandName === "whoami") {
      const content = whoamiText("Discord", interaction.user.id, allowed(interaction.user.id));
      return void (await interaction.reply({ content, flags: MessageFlags.Ephemeral }));
    }
    if (!allowed(interaction.user.id)) {
      log.warn({ userId: interaction.user.id, command: interaction.commandName }, "slash command from a user not in allowed_users ignored");
      await interaction.reply({
        content: `This is a private assistant. Your Discord id is ${interaction.user.id}.`,
        flags: MessageFlags.Ephemeral,
      });
      return;
    }
    if (await runSkillCommand({ core, deps: { ...deps, stream: cfg.stream_replies }, log }, interaction)) return;
    // A summary takes longer than the 3 s Discord gives an interaction's first answer.
    if (interaction.commandName === "compact") await interaction.deferReply();
    const text = await runCommand(interaction.commandName, `discord:${interaction.channelId}`);
    await (interaction.deferred
      ? interaction.editReply({ content: text.slice(0, 2000) })
      : interaction.reply({ content: text.slice(0, 2000) }));
  }

  /** The DM channel with a user, opened once and remembered. */
  async function dmChannel(userId: string): Promise<string> {
    const key = `discord:dm:${userId}`;
    const known = core.store.inbound.value(key);
    if (known) return known;
    const channel = (await rest.post(Routes.userChannels(), { body: { recipient_id: userId } })) as APIChannel;
    core.store.inbound.setValue(key, channel.id);
    return channel.id;
  }

  /** `discord:<channel_id>` or `discord:user:<user_id>` → a function resolving the channel id. */
  function channelOf(target: string): (() => Promise<string>) | undefined {
    const m = target.match(/^discord:(?:(user):)?(\d+)$/);
    if (!m) return undefined;
    const id = m[2] as string;
    return m[1] ? () => dmChannel(id) : async () => id;
  }

  return {
    name: "discord",
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
      return { ok: down < UNHEALTHY_AFTER_MS, detail: `connecting to the gateway for ${Math.round(down / 1000)} s${why}${again}` };
    },
    async deliver(target, text) {
      const channel = channelOf(target);
      if (!channel) throw new TransportError("discord", `not a Discord target: ${target}`);
      try {
        const ids = await sendText(rest, await channel(), text);
        return { messageId: ids[0] as string };
      } catch (err) {
        throw new TransportError("discord", `could not deliver to ${target}: ${(err as Error).message}`, { cause: err });
      }
    },
    listenerFor(target) {
      const channel = channelOf(target);
      return channel ? createChannelRenderer(deps, channel) : undefined;
    },
  };
}
