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
  const scrub = makeScrubber(secrets);
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
  return stream ? pino(options, stream) : pino(options);
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

function makeScrubber(secrets: string[]): <T>(value: T) => T {
  const list = secrets.filter((s) => s.length >= 4);
  if (list.length === 0) return (v) => v;
  const replace = (s: string) => list.reduce((acc, secret) => acc.split(secret).join("[redacted]"), s);
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return replace(value);
    if (depth > 4 || value === null || typeof value !== "object" || value instanceof Error) return value;
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = walk(v, depth + 1);
    return out;
  };
  return <T>(value: T) => walk(value, 0) as T;
}
