#!/usr/bin/env node
// The `hermes` command. Client commands import only the socket client so they start fast; `start`,
// `config check` and `doctor` load the daemon's modules on demand.
import { parseArgs } from "node:util";
import { Client, DaemonUnreachable } from "./client.js";
import { findConfigPath, socketPathOf } from "./socket-path.js";

export const EXIT = { ok: 0, failure: 1, usage: 2, unreachable: 3 } as const;

const HELP = `hermes — a small, always-on personal assistant

Usage: hermes <command> [options]

Commands:
  start                               run the daemon in the foreground
  chat [--session NAME]               interactive chat (confirmations asked inline [y/N])
  ask TEXT [--session NAME] [--yes|--no] [--json]
                                      send one message and print the final reply
  status [--json]                     uptime, connectors, model, queued runs, pending approvals
  audit [--session KEY] [--limit N] [--json]
                                      the tool-call audit trail
  approvals [list | approve ID | deny ID]
                                      pending approvals; decide one from the shell
  schedules [list | run NAME]         jobs and reminders with their next run; run one now
  tools [--json]                      every tool the model can see: source, whether it asks first, prompt cost
  doctor                              check config, storage, socket, model, tokens and the systemd setup
  config check                        validate the config and print it with secrets masked

Options:
  --config PATH   config file (default: $HERMES_CONFIG, ./hermes.yaml, /etc/hermes/hermes.yaml)
  -h, --help      this help

Exit codes: 0 ok, 1 failure, 2 usage error, 3 daemon not reachable.
`;

const OPTIONS = {
  config: { type: "string" },
  session: { type: "string" },
  yes: { type: "boolean" },
  no: { type: "boolean" },
  json: { type: "boolean" },
  limit: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

export type CliValues = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]["type"] extends "boolean" ? boolean : string };

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; args: string[] }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.version) return print("0.1.0");
  if (values.help || !command || command === "help") return print(HELP);
  const configPath = findConfigPath(values.config);
  switch (command) {
    case "start":
      return (await import("./daemon-commands.js")).start(configPath);
    case "config":
      if (rest[0] !== "check") throw new UsageError("usage: hermes config check");
      return (await import("./daemon-commands.js")).configCheck(configPath);
    case "doctor":
      return (await import("./doctor.js")).doctor(configPath);
    case "chat":
      return withClient(configPath, async (c) => (await import("./chat.js")).chat(c, values.session ?? "default"));
    case "ask":
      return ask(configPath, rest, values);
    case "status":
    case "audit":
    case "approvals":
    case "schedules":
    case "tools":
      return withClient(configPath, async (c) => (await import("./admin.js")).admin(c, command, rest, values));
    default:
      throw new UsageError(`unknown command '${command}'; see \`hermes --help\``);
  }
}

async function ask(configPath: string, rest: string[], values: CliValues): Promise<number> {
  const text = rest.join(" ").trim();
  if (!text) throw new UsageError("usage: hermes ask TEXT [--session NAME] [--yes|--no] [--json]");
  if (values.yes && values.no) throw new UsageError("--yes and --no exclude each other");
  const { runMessage } = await import("./run-view.js");
  const { confirmFor } = await import("./confirm.js");
  return withClient(configPath, async (client) => {
    const end = await runMessage(client, values.session ?? "default", text, {
      json: values.json === true,
      stream: false,
      confirm: confirmFor(values),
      out: process.stdout,
      err: process.stderr,
    });
    return end.stopReason === "model_error" || end.stopReason === "error" || end.stopReason === "interrupted" ? EXIT.failure : EXIT.ok;
  });
}

async function withClient(configPath: string, body: (client: Client) => Promise<number>): Promise<number> {
  const client = await Client.connect(await socketPathOf(configPath));
  try {
    return await body(client);
  } finally {
    client.close();
  }
}

function print(text: string): number {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  return EXIT.ok;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`hermes: ${err.message}\n`);
      process.exitCode = EXIT.usage;
    } else if (err instanceof DaemonUnreachable) {
      process.stderr.write(`${err.message}\n`);
      process.exitCode = EXIT.unreachable;
    } else {
      process.stderr.write(`hermes: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = EXIT.failure;
    }
  },
);
