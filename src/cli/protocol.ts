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
  | { v: 1; id: string; op: "ask"; session: string; text: string }
  | { v: 1; id: string; op: "decide"; approval_id: string; approve: boolean }
  | { v: 1; id: string; op: "stop"; session: string }
  | { v: 1; id: string; op: "new"; session: string }
  | { v: 1; id: string; op: "status" }
  | { v: 1; id: string; op: "approvals" }
  | { v: 1; id: string; op: "audit"; session?: string; limit?: number }
  | { v: 1; id: string; op: "schedules" }
  | { v: 1; id: string; op: "tools" }
  | { v: 1; id: string; op: "schedule_run"; name: string };

export type Reply =
  | { v: 1; id: string; type: "hello"; version: string; protocol: number }
  /** One event of a run started by `ask`, in order. */
  | { v: 1; id: string; type: "event"; event: { type: string; [key: string]: unknown } }
  /** The last line for an `ask`. */
  | { v: 1; id: string; type: "done"; run_id: string; reply: string; stop_reason: string }
  | { v: 1; id: string; type: "result"; ok: boolean; message?: string; data?: unknown }
  | { v: 1; id: string | null; type: "error"; error: { code: string; message: string } };

export type ErrorCode = "bad_json" | "too_long" | "bad_request" | "unsupported_version" | "internal";
