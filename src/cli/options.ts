/** The `hermes` command's flags, for node:util's parseArgs. */
export const OPTIONS = {
  config: { type: "string" },
  session: { type: "string" },
  yes: { type: "boolean" },
  no: { type: "boolean" },
  json: { type: "boolean" },
  audio: { type: "string" },
  image: { type: "string" },
  limit: { type: "string" },
  since: { type: "string" },
  by: { type: "string" },
  format: { type: "string" },
  name: { type: "string" },
  "model-url": { type: "string" },
  model: { type: "string" },
  "telegram-token": { type: "string" },
  "discord-token": { type: "string" },
  timezone: { type: "string" },
  briefing: { type: "string" },
  location: { type: "string" },
  "non-interactive": { type: "boolean" },
  pair: { type: "boolean" },
  "timeout-s": { type: "string" },
  options: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

export type CliValues = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]["type"] extends "boolean" ? boolean : string };

/** A command line hermes does not take: `hermes: MESSAGE` on stderr, exit 2. */
export class UsageError extends Error {}

/**
 * How many words each command takes after its name, counting an action (`show`) and its argument (`KEY`);
 * per action where it has them. A word more is a usage error that names it. A command not listed here
 * takes free text (`ask`, `search`) or checks its words itself (`setup`); an action not listed is left to
 * its command, which prints its own usage.
 */
const POSITIONALS: Record<string, number | Record<string, number>> = {
  start: 0,
  chat: 0,
  status: 0,
  usage: 0,
  audit: 0,
  tools: 0,
  doctor: 0,
  export: 0,
  backup: 1,
  restore: 1,
  pair: 1,
  "connector-test": 1,
  config: { check: 1 },
  approvals: { list: 1, approve: 2, deny: 2 },
  schedules: { list: 1, run: 2 },
  sessions: { list: 1, show: 2 },
  memory: { list: 1, forget: 2 },
  skills: { list: 1, check: 2 },
};

/** Throws a UsageError for the first word after those `command` takes (`rest`: the words after its name). */
export function checkPositionals(command: string, rest: string[]): void {
  const takes = POSITIONALS[command];
  const max = typeof takes === "object" ? takes[rest[0] ?? "list"] : takes;
  if (max === undefined || rest.length <= max) return;
  const words = [command, ...rest.slice(0, max)].join(" ");
  throw new UsageError(`unexpected argument '${rest[max]}' after \`hermes ${words}\`; see \`hermes --help\``);
}

/** `--session NAME` of `ask` and `chat`: the daemon keys it `cli:NAME` and takes only these names. */
export function checkSessionName(name: string): void {
  if (!/^[\w.:-]{1,64}$/.test(name))
    throw new UsageError(`--session takes a name of 1 to 64 letters, digits, ".", "_", ":" or "-", not '${name}'`);
}
