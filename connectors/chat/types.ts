/**
 * The chat flow every chat connector shares, in one place: who may reach the model, what strangers are
 * told, the commands, text and button approvals, replies streamed into one message and split under the
 * network's limit, delivery to a chat. A connector brings only its network: a `ChatSurface` (the SDK's
 * send/edit/limits) and the messages and presses it hears. Plugins use it through the SDK's host; the
 * built-in chat connectors are meant to use it the same way.
 */
import type { EventListener } from "../../src/agent/types.js";
import type { ButtonPress, InboundMessage, OutboundMessage } from "../sdk/types.js";

/** What a chat network can do: the connector contract's outbound half, with its limits resolved. */
export interface ChatSurface {
  /** Shows a message; resolves its id. May throw: the flow reports it and goes on. */
  send(chat: string, message: OutboundMessage): Promise<{ id: string }>;
  edit?(chat: string, id: string, message: OutboundMessage): Promise<void>;
  limits: { text: number; buttons: boolean };
}

/** The flow for one connector. None of these throws for anything a user or a network sends. */
export interface ChatFlow {
  /**
   * A user message: run once (by `id`, across restarts), answered in its chat. Resolves once it is stored;
   * rejects only when it could not be (a full disk), so the network can deliver it again.
   */
  receive(message: InboundMessage): Promise<void>;
  /** A button press: only allowed users decide, and an approval is decided once. */
  press(press: ButtonPress): Promise<void>;
  /** Renders a run nobody is attached to (resumed after a restart) into `channel` (`<name>:<chat>`). */
  listenerFor(channel: string): EventListener | undefined;
  /** Sends text to `<name>:<chat>`, split under the limit; resolves the first message's id. Throws a TransportError. */
  deliver(target: string, text: string): Promise<{ messageId: string }>;
}

/** What a failed network call is reported as: the connector's health turns red with it. */
export type FaultReporter = (what: string, err: unknown) => void;
