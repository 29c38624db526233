/**
 * What the conformance kit checks: a *subject*. Either a plugin module with its `testDriver` (./plugin-subject.ts)
 * or a built-in connector driven through a fake of its network. A subject says how to turn the connector on
 * against that network, drives it as the kit's users, and says where its network's contract differs.
 */
import type { ConnectorHost, InboundMessage, Connector as PluginInstance, TestDriver } from "../sdk/types.js";

/** The entry name the kit gives a plugin; the allowed user and a stranger, as the checks name them. */
export const NAME = "kit";
export const OWNER = "alice";
export const STRANGER = "mallory";

/** Every chat the checks write in: a network that subscribes per chat (ntfy topics) needs them first. */
export const KIT_CHATS = ["c1", "c2", "s1", "l1", "t1", "a1", "r1", "x1", "d1", "v1", "boom"];

/** What a check can set and see around the connector. */
export interface Control {
  /** Sends to this chat fail, as a broken network would. */
  failSendTo?: string;
  /** The plugin's limits with buttons: false, to check text approvals. */
  textApprovals?: boolean;
  /** A plugin's host and instance, as the kit wraps them (absent for a built-in). */
  host?: ConnectorHost;
  instance?: PluginInstance;
  /** Every message a plugin handed to host.receive. */
  received: InboundMessage[];
  toolRuns: string[];
}

export interface KitSubject {
  /** The connector's name in `hermes status` and in delivery targets `<name>:<chat>`. */
  name: string;
  profile: SubjectProfile;
  /**
   * Per check: brings the network up (or back to empty) in `dir`, with `control.failSendTo` in force.
   * Resolves what hermes needs to reach it and what the kit needs to drive it.
   */
  open(context: { dir: string; control: Control; chats: string[] }): Promise<OpenSubject>;
}

/** Where a network's contract differs from a chat network's; each difference says why. */
export interface SubjectProfile {
  /** True: a stranger gets one notice naming their id. A string: why strangers get nothing at all (mail: no backscatter). */
  strangerNotice: true | string;
  /** True: approvals can be asked in text (`limits.buttons: false`). A string: why not ("not applicable: …"). */
  textApprovals: true | string;
  /** A refused send shows in the connector's health, matching this; a string: why health does not follow sends. */
  failedSendHealth: RegExp | string;
  /** How long anything still on its way may take to arrive (default 400 ms). */
  settleMs?: number;
  /** How often the kit looks at a chat while it waits (default 25 ms). */
  pollMs?: number;
}

export interface OpenSubject {
  /** The `connectors:` entries that turn the connector on against the network (the kit turns cli and cron off). */
  connectors: Record<string, unknown>;
  /** Speaks the network in the kit's names: chats and users as the checks name them. */
  driver: TestDriver;
  /** Resolves once a freshly started daemon is connected to the network (a gateway that drops what comes before). */
  ready?(): Promise<void>;
  /** The limits as hermes uses them (a plugin's are known once it is created). */
  limits(): SubjectLimits;
  /** The network's id of a kit user: what the stranger's notice names. */
  userId(user: string): string;
  /** The network's id of a kit chat: delivery targets are `<name>:<chatId>`. */
  chatId(chat: string): string;
  /**
   * The network delivers the message `text` that `user` wrote in `chat` once more (a redelivery, a replay).
   * Resolves a note ("not applicable: why") when the connector gives its messages no ids to tell one apart.
   */
  redeliver(chat: string, user: string, text: string): Promise<string | void>;
  /** A problem a stranger's message left behind (mail: it must stay unread), or undefined. */
  strangerLeftAlone?(): Promise<string | undefined>;
}

export interface SubjectLimits {
  text: number;
  buttons: boolean;
  /** Replies stream into one message and decided approvals lose their buttons. */
  edits: boolean;
}
