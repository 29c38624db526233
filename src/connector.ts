/**
 * The connector contract. A connector turns user input and button presses into core calls and
 * renders a run's events back. Rules:
 * - `start` resolves once the connector can take input; it throws only for a problem the owner must fix.
 * - Nothing a remote peer sends may throw out of a connector: failures go to the log with their context.
 * - `deliver` returns the sent message's id as evidence, or throws a TransportError.
 */
import type { DecideResult, EventListener, RunOutcome, SubmitRequest } from "./agent/types.js";
import type { Config } from "./config/schema.js";
import type { Logger } from "./log.js";
import type { McpServerReport } from "./mcp/types.js";
import type { Pairings } from "./pairing.js";
import type { SkillSet } from "./skills/types.js";
import type { Store } from "./store/store.js";
import type { ToolReport } from "./tools/types.js";

/** How a delivery is kept where it is kept (the CLI's session). */
export interface DeliverOptions {
  /** The owner's own words (a reminder): no outside text, unlike a job's or a hook's reply. */
  own?: boolean;
}

export interface ConnectorHealth {
  ok: boolean;
  detail: string;
  /** A problem only the owner can fix (say, a rejected token): restarting the daemon would not help. */
  needsOwner?: boolean;
  /**
   * Down, but still trying: the remote end cannot be reached (an outage) while every attempt ends and the next
   * is due. Restarting would not help, so the watchdog keeps pinging; status shows it as offline.
   */
  retrying?: boolean;
}

export interface Connector {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  health(): ConnectorHealth;
  /** Takes a reloaded config (say, the cron jobs); what a connector reads only at start waits for a restart. */
  reload?(config: Config): void;
  /** Sends text to one of this connector's targets (e.g. `telegram:123`). */
  deliver?(target: string, text: string, options?: DeliverOptions): Promise<{ messageId: string }>;
  /**
   * Renders events of a run nobody is attached to (e.g. resumed after a restart) into `channel`; its reply
   * answers message `replyTo` when the run kept one.
   */
  listenerFor?(channel: string, replyTo?: string): EventListener | undefined;
  /** Present on the cron connector. */
  scheduler?: Scheduler;
  /** Present on a connector loaded from `connectors.plugins`: what `hermes status` lists with its health. */
  plugin?: { module: string; version: string };
}

export interface ScheduleInfo {
  name: string;
  kind: "job" | "reminder";
  schedule: string;
  timezone: string;
  deliver: string;
  /** ISO time of the next run, or null when it will not run again. */
  next: string | null;
  /** The next run in the schedule's zone, in words. */
  next_local: string;
  last_status: string | null;
  last_slot: string | null;
}

export interface FireResult {
  status: string;
  message_id?: string;
  reply?: string;
  error?: string;
}

export interface Scheduler {
  list(): ScheduleInfo[];
  /** Fires a job (or `remind:<id>`) now; resolves when it is recorded. */
  runNow(name: string): Promise<FireResult>;
}

export interface DaemonStatus {
  version: string;
  pid: number;
  uptime_s: number;
  connectors: { name: string; ok: boolean; detail: string; module?: string; version?: string; retrying?: boolean }[];
  /** Changed settings that a reload could not apply: they take effect at the next start. */
  restart_needed_for?: string[];
  model: { provider: string; base_url: string; name: string; reachable: boolean | null; detail: string };
  /** The endpoint that serves model calls now; `reason` says why it is not the primary. */
  serving?: { endpoint: string; model: string; primary: boolean; reason: string; context_tokens?: number };
  usage_today?: {
    calls: number;
    prompt_tokens: number;
    output_tokens: number;
    estimated_calls: number;
    daily_limits: { endpoint: string; model: string; daily_tokens: number; used: number }[];
  };
  runs: { running: number; queued: number; suspended: number };
  pending_approvals: number;
  memory: { rss_mb: number; heap_used_mb: number; heap_total_mb: number; external_mb: number };
  /** The speech-to-text endpoint (`ok: null` when `speech` is not configured). */
  speech?: { ok: boolean | null; detail: string };
  /** Whether photos can be seen (the chat model, or `model.vision_model`). */
  vision?: { ok: boolean; detail: string };
  /** Each configured MCP server; absent when there are none. */
  mcp?: McpServerReport[];
}

/** What connectors may ask of the daemon. */
export interface Core {
  submit(req: SubmitRequest): { runId: string; done: Promise<RunOutcome> };
  stop(sessionKey: string): boolean;
  /** Aborts one run, started or still queued behind another of its session; false when it has ended. */
  stopRun(runId: string): boolean;
  newSession(sessionKey: string): number;
  /** Summarises the session's turns but the newest into its running summary now (`/compact`). Never throws. */
  compact(sessionKey: string): Promise<{ ok: boolean; message: string }>;
  decide(approvalId: string, approve: boolean, by: string): DecideResult;
  status(): Promise<DaemonStatus>;
  /** Every tool the model can see: where it comes from, whether it asks first, what it costs in the prompt. */
  tools(): ToolReport[];
  /** Resolves once the MCP servers have listed their tools (or ~3 s after the start passed): `tools()` is whole then. */
  toolsKnown(): Promise<void>;
  /** Sends text to a delivery target (`telegram:…`, `discord:…`, `cli:<name>`); resolves the message id. */
  deliver(target: string, text: string, options?: DeliverOptions): Promise<{ messageId: string }>;
  /** The renderer of the connector that owns `channel`, for runs nobody is attached to. */
  listenerFor(channel: string): EventListener | undefined;
  /** The cron connector's scheduler, when cron is enabled. */
  scheduler(): Scheduler | undefined;
  config(): Config;
  /** The skills loaded from `skills.dirs` now (for `/<skill-name> text`); undefined when there are none. */
  skills?(): SkillSet | undefined;
  store: Store;
  log: Logger;
  /** Reads the config file again (what SIGHUP does); false when the new one was refused. */
  reload(): Promise<boolean>;
  /** The owner handshake of `hermes pair`: chat connectors offer strangers' private messages to it. */
  pairings: Pairings;
}
