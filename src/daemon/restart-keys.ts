import type { Config } from "../config/schema.js";

/**
 * Settings read once at start: a reload cannot change them (the socket and the listen address are bound, the
 * database is open, the chat and mail connections are made with their tokens and passwords). Everything else follows a reload:
 * tools, model, MCP, jobs, hooks and their token, allowed users, the log level.
 */
const AT_START_ONLY = [
  "storage.path",
  "storage.busy_timeout_ms",
  "log.format",
  "connectors.cli.",
  "connectors.telegram.",
  "connectors.discord.",
  "connectors.http.enabled",
  "connectors.http.listen",
  "connectors.cron.enabled",
  // The email connector is made with its options at start (a password, a server, the trust rules).
  "connectors.email.",
];
const FOLLOW_RELOADS = ["connectors.telegram.allowed_users", "connectors.discord.allowed_users"];

/** The key paths of changes between the running config and `next` that take effect only after a restart. */
export function restartKeys(running: Config, next: Config): string[] {
  return changedLeaves(running, next, "").filter(
    (path) => AT_START_ONLY.some((p) => (p.endsWith(".") ? path.startsWith(p) : path === p)) && !FOLLOW_RELOADS.includes(path),
  );
}

/** Dotted paths of the values that differ (a list counts as one value). */
function changedLeaves(a: unknown, b: unknown, prefix: string): string[] {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isObject(a) || !isObject(b)) return JSON.stringify(a) === JSON.stringify(b) ? [] : [prefix];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((k) => changedLeaves(a[k], b[k], prefix ? `${prefix}.${k}` : k));
}
