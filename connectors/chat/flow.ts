import { DiskFullError, errorMessage, isDiskFull, TransportError } from "../../src/errors.js";
import { PluginStore } from "../../src/store/plugins.js";
import type { InboundMessage } from "../sdk/types.js";
import { runCommand, skillRequest } from "./commands.js";
import { whoamiText } from "./menu.js";
import { createPressHandlers, isId } from "./press.js";
import { createRenderer, type RenderDeps, sendSplit } from "./render.js";
import { strangerNoticeDue } from "./texts.js";
import type { ChatFlow, ChatFlowDeps, ChatMessage } from "./types.js";

/** The shared chat flow for one connector (see ./types.ts). */
export function createChatFlow(deps: ChatFlowDeps): ChatFlow {
  const { core, name, surface, log } = deps;
  const ids = new PluginStore(core.store.db);
  const render: RenderDeps = { surface, store: core.store, log, onFault: deps.onFault, onSuccess: deps.onSuccess, pressed: new Set() };
  const reply = (chat: string, text: string, replyTo?: string) =>
    sendSplit(surface, chat, text, replyTo).then(deps.onSuccess, (err: unknown) => deps.onFault("reply", err));
  const sessionKey = (m: ChatMessage) => `${name}:${m.sessionChat ?? m.chat}`;
  const by = (user: string) => `${name}:${user}`;
  const markDone = (m: ChatMessage) => m.journalId !== undefined && core.store.inbound.markDone(name, m.journalId);
  const help = deps.texts?.help;

  const submit = (m: ChatMessage, text: string, images?: string[], recordedOrThrow = false) => {
    const { done } = core.submit({
      sessionKey: sessionKey(m),
      text,
      source: name,
      channel: `${name}:${m.chat}`,
      listener: createRenderer(render, m.chat, deps.stream ?? true, m.id),
      sender: { id: by(m.user), name: m.userName ?? m.user },
      replyTo: m.id,
      ...(m.journalId !== undefined && { inbound: { connector: name, id: m.journalId } }),
      ...(m.group && { group: true }),
      ...(images?.length && { images }),
      ...(recordedOrThrow && { recordedOrThrow }),
    });
    done.catch((err: unknown) => log.error({ err, chat: m.chat }, "run failed"));
  };

  /** True when the message was a stranger's: offered for pairing, logged, told once an hour. */
  const turnedAway = async (m: ChatMessage): Promise<boolean> => {
    if (deps.allowed(m.user)) return false;
    const connector = deps.pairing;
    if (connector && !m.group) {
      const displayName = m.pairingName ?? m.userName ?? m.user;
      if (await core.pairings.offer({ connector, userId: m.user, displayName, text: m.text, reply: (t) => reply(m.chat, t) })) return true;
    }
    log.warn({ user: m.user, chat: m.chat }, "message from a user not in allowed_users ignored");
    if ((m.group && deps.quietInGroups) || !strangerNoticeDue(core.store, name, m.user)) return true;
    const notice =
      deps.texts?.stranger?.(m.user) ??
      `This is a private assistant. Your ${name} id is ${m.user}; the owner can add it to allowed_users of ${deps.allowlistHome}.`;
    await reply(m.chat, notice);
    return true;
  };

  /** Whatever an allowed user's message asks for: a skill, a command, a run (with what it carries). */
  const handle = async (m: ChatMessage): Promise<void> => {
    let text = m.text.trim();
    const skilled = skillRequest(core, text);
    if (skilled === undefined && /^\/\w+/.test(text)) {
      markDone(m);
      return reply(m.chat, await runCommand(core, sessionKey(m), by(m.user), text, help?.(m.user)));
    }
    text = skilled ?? text;
    let images: string[] | undefined;
    if (m.intake) {
      const outcome = await m.intake(text);
      if (outcome.type !== "message") {
        markDone(m);
        return outcome.type === "reply" ? reply(m.chat, outcome.text) : undefined;
      }
      if (outcome.echo) await reply(m.chat, outcome.echo);
      ({ text, images } = outcome);
    }
    if (!text) {
      // A mention with nothing after it, a message whose parts carry no text: said so, not dropped in silence.
      markDone(m);
      return reply(m.chat, EMPTY_MESSAGE);
    }
    submit(m, text, images);
  };

  async function receiveChat(m: ChatMessage): Promise<void> {
    // A group message not meant for the bot (another bot's /whoami@name, a bare /whoami) is not answered either.
    if (deps.platform && m.addressed !== false && /^\/whoami(@\w+)?$/.test(m.text.trim())) {
      markDone(m);
      return reply(m.chat, whoamiText(deps.platform, m.user, deps.allowed(m.user)));
    }
    if (await turnedAway(m)) return void markDone(m);
    try {
      if (m.record && !m.record()) return void log.info({ chat: m.chat }, "a message seen before was ignored");
      if (m.addressed === false) return void markDone(m);
      await handle(m);
    } catch (err) {
      if (!isDiskFull(err)) throw err;
      log.error({ err, chat: m.chat }, "the disk is full: a message could not be recorded");
      await reply(m.chat, err instanceof DiskFullError ? err.message : new DiskFullError().message);
    }
  }

  async function receive(message: InboundMessage): Promise<void> {
    const m = validMessage(message);
    if (!m) return void log.warn({ message: describe(message) }, "a message without chat, user or text was ignored");
    const stranger = !deps.allowed(m.user);
    // A plugin's network may send anything; the CLI and the HTTP door take at most 1 MiB too.
    const tooLong = !stranger && m.text.length > MAX_INBOUND_CHARS;
    const read = !stranger && !tooLong;
    const text = read ? m.text.trim() : "";
    const skilled = read ? skillRequest(core, text) : undefined;
    const command = read && skilled === undefined && /^\/\w+/.test(text);
    try {
      // Recorded with the run in one transaction: after a crash either both exist or the network delivers it again.
      // While hermes stops, submit throws: the id is not kept either, and the plugin hands the message over again.
      const work = () => (read && !command ? submit(m, skilled ?? m.text, undefined, true) : undefined);
      if (m.id !== undefined && !ids.once(name, m.id, work).fresh) return void log.debug({ id: m.id }, "a message seen before was ignored");
      if (m.id === undefined) work();
    } catch (err) {
      if (!(err instanceof DiskFullError)) throw err;
      await reply(m.chat, `${err.message} Your message is kept by ${name} and can be sent again once there is room.`);
      throw err;
    }
    // The message is stored: what hermes says back (a notice, a command's answer, which may take a model
    // call) goes out in the background, so a plugin reading its stream one message at a time goes on.
    const answer = async () => {
      if (stranger) await turnedAway(m);
      if (tooLong) {
        log.warn({ chat: m.chat, chars: m.text.length }, "a message too long for hermes was refused");
        await reply(m.chat, tooLongText(m.text.length));
      }
      if (command) await reply(m.chat, await runCommand(core, sessionKey(m), by(m.user), text), m.id);
    };
    if (stranger || tooLong || command) void answer().catch((err: unknown) => deps.onFault("reply", err));
  }

  const { press, command } = createPressHandlers({ ...deps, render, handle, sessionKey });
  return {
    receive,
    receiveChat,
    press,
    command,
    journal: core.store.inbound,
    listenerFor: (channel, replyTo) =>
      channel.startsWith(`${name}:`) ? createRenderer(render, channel.slice(name.length + 1), false, replyTo) : undefined,
    async deliver(target, text) {
      if (!target.startsWith(`${name}:`)) throw new TransportError(name, `${target} is not a ${name} target`);
      try {
        const [first] = await sendSplit(surface, target.slice(name.length + 1), text);
        deps.onSuccess();
        return { messageId: first ?? "" };
      } catch (err) {
        deps.onFault("deliver", err);
        throw new TransportError(name, `could not deliver to ${target}: ${errorMessage(err)}`, { cause: err });
      }
    },
  };
}

/** The longest text a connector plugin may hand over as one message. */
const MAX_INBOUND_CHARS = 1_000_000;

/** The answer to a message with no text to act on (a bare mention in a group). */
const EMPTY_MESSAGE = "Your message has no text I can use: write what you need (in a group, after my name).";

const tooLongText = (chars: number) =>
  `Your message was not read: it is ${chars.toLocaleString("en")} characters long, and hermes takes at most ${MAX_INBOUND_CHARS.toLocaleString("en")}. Please send a shorter one.`;

/** The message with its fields as strings, or undefined when one of the required ones is missing. */
function validMessage(m: InboundMessage | undefined): InboundMessage | undefined {
  if (!m || typeof m !== "object") return undefined;
  const { chat, user, text } = m as unknown as Record<string, unknown>;
  if (!isId(chat) || !isId(user) || typeof text !== "string" || !text.trim()) return undefined;
  return {
    chat: String(chat),
    user: String(user),
    text,
    ...(isId(m.id) && { id: String(m.id) }),
    ...(typeof m.userName === "string" && { userName: m.userName }),
  };
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 200) ?? String(value);
  } catch {
    return String(value);
  }
}
