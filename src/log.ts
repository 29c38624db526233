import { createRequire } from "node:module";
import pino, { type DestinationStream, type Logger } from "pino";
import { journalLine, type LogFormat, resolveLogFormat } from "./log-journal.js";

export type { Logger };

const REDACT_PATHS = [
  "token",
  "*.token",
  "api_key",
  "*.api_key",
  "apiKey",
  "*.apiKey",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
];

/**
 * pino to stdout: pretty on a TTY, journal lines with their priority prefix when stdout is journald, JSON
 * otherwise or when `format` says so. Keys that hold secrets are redacted by path, and any known secret value
 * (tokens, keys from the environment) is scrubbed from messages and errors too.
 */
export function createLogger(level: string, secrets: string[] = [], format: LogFormat = "auto"): Logger {
  const list: string[] = [];
  const scrub = makeScrubber(list);
  const options: pino.LoggerOptions = {
    level,
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map(scrub) as Parameters<typeof method>);
      },
    },
    serializers: { err: (err: unknown) => scrub(pino.stdSerializers.err(err as Error)) },
  };
  const output = resolveLogFormat(format);
  const stream = output === "pretty" ? prettyStdout() : output === "journal" ? journalStdout() : undefined;
  const logger = stream ? pino(options, stream) : pino(options);
  secretLists.set(logger, list);
  addLogSecrets(logger, secrets);
  return logger;
}

/** Each logger's secret values, which its scrubber reads at every line. */
const secretLists = new WeakMap<Logger, string[]>();

/**
 * Secret values the log scrubs from now on, beside the ones it was made with: a reload's new token is
 * as secret as the first. Values shorter than 4 characters are left out (they would mangle every line).
 */
export function addLogSecrets(log: Logger, secrets: string[]): void {
  const list = secretLists.get(log);
  if (!list) return;
  for (const s of secrets) if (s.length >= 4 && !list.includes(s)) list.push(s);
}

function journalStdout(): DestinationStream {
  return { write: (line: string) => void process.stdout.write(journalLine(line)) };
}

/**
 * pino-pretty formatting each line in this thread, written to the terminal as it comes: no transport,
 * whose worker thread would cost a start its own Node environment for a person reading along.
 */
function prettyStdout(): DestinationStream | undefined {
  let prettyFactory: typeof import("pino-pretty")["prettyFactory"];
  try {
    ({ prettyFactory } = createRequire(import.meta.url)("pino-pretty") as typeof import("pino-pretty"));
  } catch {
    return undefined; // an install without it logs JSON on the terminal too
  }
  const format = prettyFactory({ colorize: true, translateTime: "SYS:HH:MM:ss" });
  return { write: (line: string) => void process.stdout.write(format(line)) };
}

function makeScrubber(list: readonly string[]): <T>(value: T) => T {
  const replace = (s: string) => list.reduce((acc, secret) => acc.split(secret).join("[redacted]"), s);
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return replace(value);
    if (value === null || typeof value !== "object" || value instanceof Error) return value;
    // Deeper than the walk goes, an object that holds a secret anywhere is not written at all.
    if (depth > 4) return list.some((secret) => safeJson(value).includes(secret)) ? "[redacted]" : value;
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = walk(v, depth + 1);
    return out;
  };
  return <T>(value: T) => (list.length === 0 ? value : (walk(value, 0) as T));
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}
