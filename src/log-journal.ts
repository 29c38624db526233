import { fstatSync } from "node:fs";

/** How the log is written: `auto` picks pretty on a terminal, journal lines under systemd, JSON elsewhere. */
export type LogFormat = "auto" | "json" | "pretty" | "journal";

/**
 * True when stdout is the journal's stream: systemd sets JOURNAL_STREAM to its `device:inode`, and a child
 * that inherited the variable but writes elsewhere (a pipe, a file) must not be taken for it.
 */
export function stdoutIsJournal(env: NodeJS.ProcessEnv = process.env, fd = 1): boolean {
  const [dev, ino] = (env.JOURNAL_STREAM ?? "").split(":");
  if (!dev || !ino) return false;
  try {
    const stat = fstatSync(fd, { bigint: true });
    return String(stat.dev) === dev && String(stat.ino) === ino;
  } catch {
    return false;
  }
}

/** The format `auto` resolves to for this process. */
export function resolveLogFormat(format: LogFormat, tty = process.stdout.isTTY === true, env = process.env): Exclude<LogFormat, "auto"> {
  if (format !== "auto") return format;
  if (tty) return "pretty";
  return stdoutIsJournal(env) ? "journal" : "json";
}

/** sd-daemon(3)'s priority prefixes by pino level: journald files each line under its own priority. */
function priorityOf(level: number): number {
  if (level >= 60) return 2; // fatal: crit
  if (level >= 50) return 3;
  if (level >= 40) return 4;
  if (level >= 30) return 6;
  return 7;
}

/** Fields journald records itself (_PID, _HOSTNAME, the time) or that the prefix carries. */
const DROPPED = new Set(["level", "time", "pid", "hostname", "msg"]);

/**
 * One pino JSON line as one journal line: `<6>hermes is ready version=0.1.0 connectors=["cli"]`. Values keep
 * JSON's escapes, so a stack stays on its line (journald would file the rest of a multi-line entry at info).
 */
export function journalLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return `<6>${json.replace(/\n(?!$)/g, "\\n").trimEnd()}\n`;
  }
  const fields = Object.entries(entry)
    .filter(([key]) => !DROPPED.has(key))
    .map(([key, value]) => `${key}=${fieldValue(value)}`);
  const msg = typeof entry.msg === "string" ? entry.msg.replace(/\n/g, "\\n") : "";
  return `<${priorityOf(Number(entry.level))}>${[msg, ...fields].filter(Boolean).join(" ")}\n`;
}

function fieldValue(value: unknown): string {
  if (typeof value === "string" && /^[\w.,:/@+-]+$/.test(value)) return value;
  return JSON.stringify(value) ?? String(value);
}
