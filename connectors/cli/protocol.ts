/**
 * The CLI socket protocol, version 1: newline-delimited JSON over a Unix socket (mode 0600).
 * Each request carries `v` (1), a client-chosen `id` and an `op`; every reply line echoes the `id`.
 * A line over 1 MiB or that is not a JSON object gets an `error` reply; the connection stays usable.
 * This file has no imports so the client stays fast to start.
 */
export const PROTOCOL_VERSION = 1;
export const MAX_LINE_BYTES = 1024 * 1024;

export type Request =
  | { v: 1; id: string; op: "hello" }
  | { v: 1; id: string; op: "ask"; session: string; text: string; file?: AskFile }
  /** A piece of a file for a later `ask` (base64, within the line limit); the first piece starts an upload. */
  | { v: 1; id: string; op: "upload"; data: string; upload?: string }
  | { v: 1; id: string; op: "decide"; approval_id: string; approve: boolean }
  | { v: 1; id: string; op: "stop"; session: string }
  | { v: 1; id: string; op: "new"; session: string }
  | { v: 1; id: string; op: "status" }
  | { v: 1; id: string; op: "approvals" }
  | { v: 1; id: string; op: "audit"; session?: string; limit?: number }
  | { v: 1; id: string; op: "schedules" }
  | { v: 1; id: string; op: "schedule_run"; name: string }
  | { v: 1; id: string; op: "tools" }
  /**
   * The usage ledger's totals since `since` (ms since the epoch, or a date such as "2026-11-01" or
   * "2026-11-01 08:00" in the configured timezone), optionally grouped; the result says the `since` it used.
   */
  | { v: 1; id: string; op: "usage"; since: number | string; by?: string }
  | { v: 1; id: string; op: "compact"; session: string }
  | { v: 1; id: string; op: "sessions"; limit?: number }
  | { v: 1; id: string; op: "session_show"; key: string }
  | { v: 1; id: string; op: "memories" }
  | { v: 1; id: string; op: "forget"; memory_id: number }
  | { v: 1; id: string; op: "backup"; path?: string }
  /** `hermes pair`: an event `pair_code`, then a result with the paired user's `{id, name}` (or why it is void). */
  | { v: 1; id: string; op: "pair"; connector: "telegram" | "discord"; timeout_s?: number; name?: string }
  /** Tells the user just paired that it worked (`ok`), once the config holding them is loaded. */
  | { v: 1; id: string; op: "pair_confirm"; connector: "telegram" | "discord"; user_id: string; ok: boolean }
  /** Reads the config file again, as SIGHUP does; the result says whether it was taken. */
  | { v: 1; id: string; op: "reload" };

/** A file an `ask` carries: an upload of this connection, heard (audio) or seen (image) like one from the phone. */
export interface AskFile {
  upload: string;
  kind: "audio" | "image";
  name: string;
}

/** Uploads per connection: at most this many bytes in all (the Bot API's download limit). */
export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;

/** A request's `limit`: a whole number from 1, at most `max`; anything else (absent, 2.5, "7") is 50. */
export function limitOf(value: unknown, max: number): number {
  return Number.isInteger(value) && (value as number) > 0 ? Math.min(value as number, max) : 50;
}

export type Reply =
  | { v: 1; id: string; type: "hello"; version: string; protocol: number; pid?: number }
  /** One event of a run started by `ask`, in order. */
  | { v: 1; id: string; type: "event"; event: { type: string; [key: string]: unknown } }
  /** The last line for an `ask`. */
  | { v: 1; id: string; type: "done"; run_id: string; reply: string; stop_reason: string }
  | { v: 1; id: string; type: "result"; ok: boolean; message?: string; data?: unknown }
  | { v: 1; id: string | null; type: "error"; error: { code: string; message: string } };

export type ErrorCode = "bad_json" | "too_long" | "bad_request" | "unsupported_version" | "internal";
