/**
 * The chat flow every chat connector shares, in one place: who may reach the model, what strangers are
 * told, the commands, text and button approvals, replies streamed into one message and split under the
 * network's limit, delivery to a chat. A connector brings only its network: a `ChatSurface` (the SDK's
 * send/edit/limits) and the messages and presses it hears. Plugins use it through the SDK's host; the
 * built-in chat connectors (Telegram, Discord) call it the same way, with a few optional fields for what
 * only a built-in knows (its own inbound journal, group chats, media, pairing).
 */
import type { EventListener } from "../../src/agent/types.js";
import type { Core } from "../../src/connector.js";
import type { Logger } from "../../src/log.js";
import type { Intake } from "../../src/media/types.js";
import type { PairConnector } from "../../src/pairing.js";
import type { InboundStore } from "../../src/store/inbound.js";
import type { ButtonPress, InboundMessage, OutboundMessage } from "../sdk/types.js";

/** A message the flow shows. `draft`: a streamed reply still growing (a network may show it unformatted). */
export type SurfaceMessage = OutboundMessage & { draft?: boolean };

/** What a chat network can do: the connector contract's outbound half, with its limits resolved. */
export interface ChatSurface {
  /** Shows a message; resolves its id. May throw: the flow reports it and goes on. */
  send(chat: string, message: SurfaceMessage): Promise<{ id: string }>;
  edit?(chat: string, id: string, message: SurfaceMessage): Promise<void>;
  limits: { text: number; buttons: boolean };
  /** Splits a reply into messages, in order (Telegram measures its HTML); default: `splitText` under `limits.text`. */
  split?(text: string): string[];
  /** A typing indicator, sent while a run works and renewed every `everyMs` (networks let it fade). */
  typing?: { send(chat: string): Promise<unknown>; everyMs: number };
  /** The least time between two edits of a streamed draft (networks rate-limit edits); default 700 ms. */
  editEveryMs?: number;
  /** Drafts are shown plain and finished replies formatted: the last edit is made even when the text is the same. */
  formatsFinal?: boolean;
  /** The network answers a press with the decided message itself (Discord's interaction update): no edit after it. */
  pressShowsDecision?: boolean;
}

/** A user message as a built-in hands it over: the SDK's message and what only a built-in knows. */
export interface ChatMessage extends InboundMessage {
  /** The chat whose session it belongs to, when replies go to a part of it (a forum topic): `<name>:<sessionChat>`. */
  sessionChat?: string;
  /** False: a group message not meant for the bot; only /whoami is answered and strangers are logged. */
  addressed?: boolean;
  /** A chat several people write in: the model sees the sender's name; no pairing offers there. */
  group?: boolean;
  /** How `hermes pair` shows this user to the owner (default `userName`). */
  pairingName?: string;
  /** The id under which the connector's own journal recorded it: marked done once handled, replayed if not. */
  journalId?: number | bigint;
  /** Records it in the connector's journal after the allowlist; false when seen before (dropped). */
  record?(): boolean;
  /** Fetches what the message carries (a photo, a voice note) once the user is known to be allowed. */
  intake?(text: string): Promise<Intake | { type: "ignore" }>;
}

/** A button press as a built-in hands it over. */
export interface ChatPress extends ButtonPress {
  /** Who pressed, as the decision records it after `<name>:` (default: the user id). */
  by?: string;
}

/** What the flow made of a press, for a network that answers each press (a callback answer, an interaction). */
export type PressAnswer =
  | { kind: "unknown" }
  | { kind: "refused"; text: string }
  | { kind: "decided"; text: string; shown: string }
  | { kind: "closed"; text: string };

/**
 * How to answer a command from a network's command menu (Discord's slash commands): `reply` with text (only
 * to its sender: a stranger's), `run`: a run starts and replies in the chat, `slow`: the reply takes a while.
 */
export type CommandAnswer = { kind: "reply"; text: string; onlySender?: boolean } | { kind: "run" } | { kind: "slow" };

/** The flow for one connector. None of these throws for anything a user or a network sends. */
export interface ChatFlow {
  /**
   * A user message: run once (by `id`, across restarts), answered in its chat. Resolves once it is stored;
   * rejects only when it could not be (a full disk), so the network can deliver it again.
   */
  receive(message: InboundMessage): Promise<void>;
  /** A built-in's message, unchecked (see ChatMessage); a full disk is answered in the chat, not thrown. */
  receiveChat(message: ChatMessage): Promise<void>;
  /** A button press: only allowed users decide, and an approval is decided once. `answer` hears the outcome first. */
  press(press: ChatPress, answer?: (a: PressAnswer) => Promise<unknown>): Promise<void>;
  /** A command from the network's menu (`text` is `/<command> <text>`), answered through `answer`. */
  command(message: ChatMessage, answer: (a: CommandAnswer) => Promise<unknown>): Promise<void>;
  /** Renders a run nobody is attached to (resumed after a restart) into `channel` (`<name>:<chat>`), answering `replyTo`. */
  listenerFor(channel: string, replyTo?: string): EventListener | undefined;
  /** Sends text to `<name>:<chat>`, split under the limit; resolves the first message's id. Throws a TransportError. */
  deliver(target: string, text: string): Promise<{ messageId: string }>;
  /** The connector's own journal of received updates, for networks that replay (Telegram's update ids). */
  journal: InboundStore;
}

/** What a failed network call is reported as: the connector's health turns red with it (or the log hears it). */
export type FaultReporter = (what: string, err: unknown) => void;

/** What the flow for one connector is built from. */
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
  /** Replies stream into one message where the network can edit (default true). */
  stream?: boolean;
  /** The network's name in users' words ("Telegram"): `/whoami` is answered, to anyone. */
  platform?: string;
  /** Strangers writing privately are offered to `hermes pair <pairing>` first. */
  pairing?: PairConnector;
  /** The network's own words for `/help` and for the strangers' notice. */
  texts?: { help?(user: string): string; stranger?(user: string): string };
  /** Strangers in group chats are only logged, never answered. */
  quietInGroups?: boolean;
}
