/**
 * The one event vocabulary of a run. Connectors render these, the CLI's `--json` prints them,
 * and the audit trail records the same facts. Every event carries the run it belongs to.
 * Below them, what connectors hand the runner and what it answers.
 */

import type { GateEvent } from "../gate/types.js";
import type { ChatMessage } from "../model/types.js";
import type { Person } from "../store/memory.js";
import type { UsageRecord } from "../store/usage.js";

/** `refused`: the turn brought something the model cannot take (an image for a model that cannot see); the reply says why. */
export type StopReason =
  | "done"
  | "max_steps"
  | "max_run_tokens"
  | "repeat"
  | "aborted"
  | "model_error"
  | "suspended"
  | "interrupted"
  | "refused";

export type AgentEvent =
  | { type: "run_start"; runId: string; session: string; source: string }
  | { type: "text"; runId: string; delta: string }
  /** The gate's events (src/gate/types.ts): a call proposed, blocked, waiting for approval, decided, done. */
  | GateEvent
  /** One model call of a step, as the usage ledger recorded it (tokens are estimates when `estimated`). */
  | ({ type: "usage"; runId: string; step: number } & Omit<UsageRecord, "runId" | "sessionId" | "step">)
  /** A one-line note for the owner: the model failed over, a budget was reached. */
  | { type: "notice"; runId: string; text: string }
  | { type: "run_end"; runId: string; reply: string; stopReason: StopReason }
  | { type: "error"; runId?: string; message: string };

export type AgentEventType = AgentEvent["type"];

/** Receives a run's events. Must not throw; a slow listener must not block the run. */
export type EventListener = (event: AgentEvent) => void;

/** How a run ended (or paused, when waiting for approvals). */
export interface RunOutcome {
  runId: string;
  reply: string;
  stopReason: StopReason;
}

/** A message for the agent: what a connector hands the runner. */
export interface SubmitRequest {
  sessionKey: string;
  text: string;
  /** The connector the message came from (cli, telegram, discord, cron). */
  source: string;
  /** Where approval requests and late replies go; defaults to the session key. */
  channel?: string;
  listener?: EventListener;
  /** Limits the run to these tools (a scheduled job's `tools`). */
  tools?: string[];
  /** The run's id, when the caller promised one before submitting (a rate-limited hook); else a new one. */
  runId?: string;
  /** The recorded chat update this message came from: marked handled in the transaction that records the run. */
  inbound?: { connector: string; id: number | bigint };
  /** Who sent it (`telegram:<id>`, `discord:<id>`); default: the source itself (`cli`, `cron`, `hook`). */
  sender?: Person;
  /** The id of the message this answers on its connector: kept with the run, so a reply sent after a restart threads as a live one does. */
  replyTo?: string;
  /** A chat several people write in: the message reaches the model labelled with its sender's name. */
  group?: boolean;
  /** Images the message carries: files under the data directory's media folder (see src/media/images.ts). */
  images?: string[];
  /**
   * An ephemeral run (an API request without a session): these messages are its whole history before
   * its own message, and nothing of the conversation is stored, only the audit. `sessionKey` must then
   * be a fresh ephemeral key (`api:~<id>`, see isEphemeralKey).
   */
  context?: ChatMessage[];
  /**
   * The caller counts the message as handled once `submit` returns (a plugin's message, recorded by its id
   * in the same transaction): while hermes stops, `submit` then throws StoppingError instead of answering
   * that it is shutting down, so that nothing is recorded and the message is handed over again later.
   */
  recordedOrThrow?: boolean;
}

export type { DecideResult } from "../gate/approvals.js";
