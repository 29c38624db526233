import { maskUrlsInText } from "./url-secrets.js";
/**
 * The few typed errors of hermes. Each says whose fault a failure is:
 * - ConfigError: the owner's configuration (fix the file or the environment);
 * - ModelError: the model endpoint (unreachable, refused, answered nonsense);
 * - ToolError: a tool that could not do what was asked;
 * - TransportError: a chat network or socket peer;
 * - DiskFullError: the disk that holds the database (the owner must free space).
 */

/** One problem found in a config file, located to file:line:col and a key path. */
export interface ConfigProblem {
  file: string;
  line: number;
  col: number;
  path: string;
  message: string;
}

export class ConfigError extends Error {
  readonly problems: ConfigProblem[];
  constructor(problems: ConfigProblem[]) {
    super(problems.map(formatProblem).join("\n"));
    this.name = "ConfigError";
    this.problems = problems;
  }
}

export function formatProblem(p: ConfigProblem): string {
  const where = p.path ? ` ${p.path}:` : "";
  return `${p.file}:${p.line}:${p.col}:${where} ${p.message}`;
}

export type ModelErrorKind =
  | "unreachable"
  | "http"
  | "timeout"
  | "aborted"
  | "bad_response"
  | "model_missing"
  /** The prompt did not fit the endpoint's context window (a 400 that a smaller request can fix). */
  | "context_exceeded"
  /** Every endpoint is past its `daily_tokens`. */
  | "budget";

export class ModelError extends Error {
  readonly kind: ModelErrorKind;
  readonly status: number | undefined;
  readonly retryable: boolean;
  /** How long the server asked us to wait before retrying (Retry-After), if it said. */
  readonly retryAfterMs: number | undefined;
  /** What the owner can do about it, when the kind's usual advice would be wrong. */
  readonly fix: string | undefined;
  constructor(
    kind: ModelErrorKind,
    message: string,
    opts: { status?: number; retryable?: boolean; retryAfterMs?: number; fix?: string } = {},
  ) {
    // The message names the endpoint, and it reaches chat replies and `hermes status`: no secret of its URL goes with it.
    super(maskUrlsInText(message));
    this.name = "ModelError";
    this.kind = kind;
    this.status = opts.status;
    this.retryable = opts.retryable ?? false;
    this.retryAfterMs = opts.retryAfterMs;
    this.fix = opts.fix === undefined ? undefined : maskUrlsInText(opts.fix);
  }
}

export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolError";
  }
}

export class TransportError extends Error {
  readonly peer: string;
  /** `options.cause`: the library's error this one wraps, kept for the log (as grammY's own errors keep theirs). */
  constructor(peer: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TransportError";
    this.peer = peer;
  }
}

export const DISK_FULL_MESSAGE =
  "hermes cannot save anything right now: the disk that holds its database is full. The owner needs to free some space on it.";

/** Nothing new can be recorded until the owner frees space; what was recorded before is intact. */
export class DiskFullError extends Error {
  constructor(detail = "this message was not taken; send it again once there is room") {
    super(`${DISK_FULL_MESSAGE} (${detail})`);
    this.name = "DiskFullError";
  }
}

/** SQLite's "database or disk is full", the file system's ENOSPC, or hermes' own DiskFullError. */
export function isDiskFull(err: unknown): boolean {
  if (err instanceof DiskFullError) return true;
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === "SQLITE_FULL" || code === "ENOSPC";
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A message that came while hermes stops is not recorded: whoever holds it keeps it and hands it over again. */
export class StoppingError extends Error {
  constructor() {
    super("hermes is shutting down; the message was not taken");
    this.name = "StoppingError";
  }
}

/** The abort reason when the daemon stops: the run is recorded as interrupted, not aborted. */
export class ShutdownAbort extends Error {
  constructor() {
    super("hermes is shutting down");
    this.name = "ShutdownAbort";
  }
}
