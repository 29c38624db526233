/**
 * The public connector contract (SPEC §17): what a plugin module exports, what hermes hands it (the host),
 * and what it hands back (the connector). Everything here is `hermes/connector`; nothing else of hermes is
 * public. A plugin written for `api: 1` keeps working as long as hermes supports api 1.
 *
 * Rules a plugin can rely on:
 * - hermes enforces the entry's `allowed_users`: a message from anyone else reaches no model, and its sender
 *   gets one short notice naming their id (through `send`). A plugin never filters users itself.
 * - hermes splits replies longer than `limits.text` in order, streams into one message when `edit` exists,
 *   and asks approvals with buttons (or in text when `limits.buttons` is false).
 * - A plugin that throws or rejects (in `start`, `send`, `edit`, a handler) never takes the daemon down: its
 *   health turns red with the reason, and the other connectors keep working.
 */

/** The plugin contract version this hermes speaks. A module declaring another `api` is refused at start. */
export const CONNECTOR_API = 1 as const;

/** A plugin module's default export (ES module `export default`, or CommonJS `module.exports`). */
export interface ConnectorPlugin<Options = Record<string, unknown>> {
  /** The contract version the plugin was written for: `CONNECTOR_API`. */
  api: typeof CONNECTOR_API;
  /**
   * Makes the connector. Called once per start with the entry's `options` (`${VAR}` already substituted,
   * and parsed by `optionsSchema` when one is given). Should not do I/O: `start` does.
   */
  create(host: ConnectorHost, options: Options): Connector;
  /**
   * Optional: the options' schema, checked before `create` so a wrong option is reported at its line and
   * column in hermes.yaml. Either a zod schema (anything with `safeParse`) or a JSON Schema object.
   */
  optionsSchema?: OptionsSchema;
}

/** A zod schema (duck-typed: `safeParse`) or a JSON Schema (draft 2020-12 or 7) object. */
export type OptionsSchema = { safeParse(value: unknown): unknown } | Record<string, unknown>;

/** A user message as the plugin hands it to hermes. All ids are strings, whatever the network uses. */
export interface InboundMessage {
  /** The conversation it came from; replies go back to it. The session key is `<entry name>:<chat>`. */
  chat: string;
  /** Who wrote it: matched against the entry's `allowed_users`. */
  user: string;
  text: string;
  /**
   * The network's id of the message. When given, hermes runs it exactly once, across restarts too: a
   * redelivery after a reconnect or a replay from an old cursor is dropped.
   */
  id?: string;
  /** A display name, for group chats and memories. */
  userName?: string;
}

/** A press of a button hermes sent: `button` is the `id` hermes gave that button. */
export interface ButtonPress {
  chat: string;
  user: string;
  button: string;
}

/** A button on a message hermes sends. Pressing it is reported back with `host.press`. */
export interface Button {
  id: string;
  label: string;
}

/** A message hermes asks the plugin to show. */
export interface OutboundMessage {
  /** Plain text (Markdown as the model wrote it), at most `limits.text` characters. */
  text: string;
  /** Present on approval requests (when `limits.buttons` is not false). An empty list removes buttons. */
  buttons?: Button[];
  /**
   * The `id` of the inbound message whose run this answers (its reply, an approval it asks), also for a run
   * resumed after a restart (an id handed over before it); absent for a delivery that answers nothing (a
   * job's result, a hook) and for a message that came without an id.
   */
  replyTo?: string;
}

export interface Health {
  ok: boolean;
  /** One line for `hermes status`: what works, or what is wrong and what to do. */
  detail: string;
}

/** hermes' log, with the plugin's name on every line. Objects first, like pino. */
export interface HostLog {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
}

/** What hermes gives a plugin. Every call is safe to make at any time; none of them throws for bad input. */
export interface ConnectorHost {
  /** The entry's `name`. */
  readonly name: string;
  readonly log: HostLog;
  /**
   * Hands a user message to hermes. Resolves once the message is stored (not when the run ends): after
   * that the plugin may acknowledge it to its network. Rejects only when it could not be stored (a full
   * disk, or hermes is shutting down); then do not acknowledge it, so the network delivers it again. A text over 1,000,000 characters
   * from an allowed user is not read: hermes tells the chat so, and the message counts as handled.
   */
  receive(message: InboundMessage): Promise<void>;
  /** Reports a button press. Only the entry's allowed users decide; a press from anyone else changes nothing. */
  press(press: ButtonPress): Promise<void>;
  /** Small strings that survive restarts (a stream cursor, an offset), per plugin entry. */
  readonly state: {
    get(key: string): string | undefined;
    set(key: string, value: string): void;
  };
}

/** What a plugin makes: the network side of one connector. */
export interface Connector {
  /** Resolves when it can take messages. Throws only for a problem the owner must fix (the message says how). */
  start(): Promise<void>;
  /** Stops taking messages and closes connections. */
  stop(): Promise<void>;
  /** Called by `hermes status`; must not throw. Absent: healthy unless a call failed. */
  health?(): Health;
  /** Shows a message in `chat`; resolves with the network's id of the new message (used for `edit`). */
  send(chat: string, message: OutboundMessage): Promise<{ id: string }>;
  /** Present: replies stream into one message, and decided approvals lose their buttons. */
  edit?(chat: string, id: string, message: OutboundMessage): Promise<void>;
  limits?: Limits;
}

export interface Limits {
  /** The most characters one message may hold; longer replies are split in order. Default: 4000. */
  text?: number;
  /** False: the network has no buttons; approvals are asked in text (`/approve <id>`, `/deny <id>`). */
  buttons?: boolean;
}

/**
 * What `hermes connector-test` drives besides the plugin: the plugin module's `testDriver` export. It plays
 * the network: a fake server the plugin talks to, where the kit writes as users and reads what was shown.
 */
export interface TestDriver {
  /**
   * Starts the fake network; returns the options that point the plugin at it. `context.chats` names every
   * chat the kit will write in (for networks that must subscribe to each); a driver may ignore it.
   */
  setup(context?: { chats: string[] }): Promise<{ options: Record<string, unknown> }> | { options: Record<string, unknown> };
  /** A user writes `text` in `chat` (through the fake network, as the real one would deliver it). */
  inbound(message: { chat: string; user: string; text: string }): Promise<void> | void;
  /** A user presses the button with id `button` on a message in `chat`. */
  press(press: { chat: string; user: string; button: string }): Promise<void> | void;
  /** Every message shown in `chat`, in order, each in its final state (after edits). */
  sent(chat: string): Promise<SentMessage[]> | SentMessage[];
  teardown(): Promise<void> | void;
}

export interface SentMessage {
  id: string;
  text: string;
  buttons?: Button[];
}
