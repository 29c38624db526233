import type { Core } from "../../src/connector.js";
import { DiskFullError, errorMessage, TransportError } from "../../src/errors.js";
import type { Logger } from "../../src/log.js";
import { PluginStore } from "../../src/store/plugins.js";
import { strangerNoticeDue } from "../chat.js";
import { parseApprovalButton } from "../sdk/buttons.js";
import type { ButtonPress, InboundMessage } from "../sdk/types.js";
import { runCommand } from "./commands.js";
import { createRenderer, type RenderDeps, sendSplit, showDecision } from "./render.js";
import type { ChatFlow, ChatSurface, FaultReporter } from "./types.js";

export interface ChatFlowDeps {
  core: Core;
  /** The connector's name: session keys and delivery targets are `<name>:<chat>`. */
  name: string;
  surface: ChatSurface;
  /** Whether `user` may reach the model. Asked at each message, so a reloaded allowlist counts at once. */
  allowed(user: string): boolean;
  /** Where the owner adds a user, for the strangers' notice (`connectors.plugins entry 'echo'`). */
  allowlistHome: string;
  log: Logger;
  onFault: FaultReporter;
  onSuccess(): void;
}

/** The shared chat flow for one connector (see ./types.ts). */
export function createChatFlow(deps: ChatFlowDeps): ChatFlow {
  const { core, name, surface, log } = deps;
  const ids = new PluginStore(core.store.db);
  const render: RenderDeps = { surface, store: core.store, log, onFault: deps.onFault, onSuccess: deps.onSuccess };
  const reply = (chat: string, text: string) =>
    sendSplit(surface, chat, text).then(deps.onSuccess, (err: unknown) => deps.onFault("reply", err));

  /** What a message asks for, decided before anything is recorded. */
  const route = (m: InboundMessage) => {
    if (!deps.allowed(m.user)) return "stranger" as const;
    return /^\/\w+/.test(m.text.trim()) ? ("command" as const) : ("run" as const);
  };

  const submit = (m: InboundMessage) => {
    const channel = `${name}:${m.chat}`;
    const { done } = core.submit({
      sessionKey: channel,
      text: m.text,
      source: name,
      channel,
      listener: createRenderer(render, m.chat, true),
      sender: { id: `${name}:${m.user}`, name: m.userName ?? m.user },
    });
    done.catch((err: unknown) => log.error({ err, chat: m.chat }, "run failed"));
  };

  const noticeStranger = async (m: InboundMessage) => {
    log.warn({ user: m.user, chat: m.chat }, "message from a user not in allowed_users ignored");
    if (!strangerNoticeDue(core.store, name, m.user)) return;
    await reply(
      m.chat,
      `This is a private assistant. Your ${name} id is ${m.user}; the owner can add it to allowed_users of ${deps.allowlistHome}.`,
    );
  };

  async function receive(message: InboundMessage): Promise<void> {
    const m = validMessage(message);
    if (!m) return void log.warn({ message: describe(message) }, "a message without chat, user or text was ignored");
    const kind = route(m);
    try {
      // Recorded with the run in one transaction: after a crash either both exist or the network delivers it again.
      const work = () => (kind === "run" ? submit(m) : undefined);
      if (m.id !== undefined && !ids.once(name, m.id, work).fresh) return void log.debug({ id: m.id }, "a message seen before was ignored");
      if (m.id === undefined) work();
    } catch (err) {
      if (!(err instanceof DiskFullError)) throw err;
      await reply(m.chat, `${err.message} Your message is kept by ${name} and can be sent again once there is room.`);
      throw err;
    }
    if (kind === "stranger") await noticeStranger(m);
    if (kind === "command") await reply(m.chat, await runCommand(core, `${name}:${m.chat}`, `${name}:${m.user}`, m.text.trim()));
  }

  async function press(p: ButtonPress): Promise<void> {
    const button = typeof p?.button === "string" ? parseApprovalButton(p.button) : undefined;
    if (!button) return void log.warn({ button: p?.button }, "a press of a button hermes did not send was ignored");
    if (!deps.allowed(String(p.user))) {
      return void log.warn(
        { user: p.user, approvalId: button.approvalId },
        "approval button pressed by a user not in allowed_users; ignored",
      );
    }
    const result = core.decide(button.approvalId, button.approve, `${name}:${p.user}`);
    if (!result.ok && result.approval && result.approval.status !== "pending") {
      const { id, status, decided_by } = result.approval;
      await showDecision(render, id, status as "approved" | "denied" | "expired", decided_by ?? "").catch((err: unknown) =>
        deps.onFault("decision", err),
      );
    }
  }

  return {
    receive,
    press: (p) => press(p).catch((err: unknown) => log.error({ err }, "button press failed")),
    listenerFor: (channel) => (channel.startsWith(`${name}:`) ? createRenderer(render, channel.slice(name.length + 1), false) : undefined),
    async deliver(target, text) {
      if (!target.startsWith(`${name}:`)) throw new TransportError(name, `${target} is not a ${name} target`);
      try {
        const [first] = await sendSplit(surface, target.slice(name.length + 1), text);
        deps.onSuccess();
        return { messageId: first ?? "" };
      } catch (err) {
        deps.onFault("deliver", err);
        throw new TransportError(name, `could not deliver to ${target}: ${errorMessage(err)}`);
      }
    },
  };
}

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

function isId(value: unknown): value is string | number {
  return (typeof value === "string" && value !== "") || (typeof value === "number" && Number.isFinite(value));
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 200) ?? String(value);
  } catch {
    return String(value);
  }
}
