#!/usr/bin/env node
// The `hermes` command, the bundle's entry (dist/app/hermes.js, CommonJS). Client commands import only the
// socket client (and `ask`'s few kB of rendering) so they start fast; the commands that run the daemon's
// code load it on demand, with V8's code cache on (`daemonCode`).
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { Client, DaemonUnreachable } from "./client.js";
import { endQuietlyOnClosedPipe } from "./closed-pipe.js";
import { useCompileCache } from "./compile-cache.js";
import { confirmFor } from "./confirm.js";
import { type CliValues, checkPositionals, checkSessionName, OPTIONS, UsageError } from "./options.js";
import { errorLine, runMessage } from "./run-view.js";
import { findConfigPath, loadEnvFile, socketPathOf } from "./socket-path.js";

export const EXIT = { ok: 0, failure: 1, usage: 2, unreachable: 3 } as const;

const HELP = `hermes — a small, always-on personal assistant

Usage: hermes <command> [options]

Commands:
  start                               run the daemon in the foreground
  chat [--session NAME]               interactive chat (confirmations asked inline [y/N])
  ask TEXT [--session NAME] [--yes|--no] [--json] [--audio FILE | --image FILE]
                                      send one message and print the final reply
  status [--json]                     uptime, connectors, model, queued runs, pending approvals
  usage [--since 7d] [--by day|session|model|endpoint] [--json]
                                      model calls and tokens from the usage ledger
  audit [--session KEY] [--limit N] [--json]
                                      the tool-call audit trail
  approvals [list | approve ID | deny ID]
                                      pending approvals; decide one from the shell
  schedules [list | run NAME]         jobs and reminders with their next run; run one now
  sessions [list [--limit N] | show KEY]
                                      conversations, the most recently used first; the summary of one
  memory [list | forget ID]           remembered facts, whose they are; forget one
  backup [PATH]                       a consistent copy of the database (also while running), checked
  restore PATH                        put a backup in place (daemon stopped; the old database is kept aside)
  export [--session KEY] [--format md|json]
                                      conversations for reading or moving elsewhere
  search QUERY [--session KEY] [--limit N] [--json]
                                      every past conversation searched by words, newest first
  tools [--json]                      every tool the model can see: source, whether it asks first, prompt cost
  skills [list | check PATH] [--json] the skills, their cost in the prompt's index and any problems; check a folder
  setup [SECTION…] [--non-interactive] [--model-url URL] [--model NAME] [--telegram-token T]
        [--discord-token T] [--timezone ZONE] [--briefing HH:MM|off] [--location PLACE] [--pair]
                                      write the config and the secrets file, checking each answer;
                                      sections: model, telegram, discord, timezone, briefing
  pair telegram|discord [--name NAME] [--timeout-s 600]
                                      add the owner (or a second person) to allowed_users by a code
  doctor                              check config, storage, socket, model, tokens and the systemd setup
  config check                        validate the config and print it with secrets masked
  connector-test MODULE [--options JSON]
                                      run the connector conformance kit against a plugin

Options:
  --config PATH   config file (default: $HERMES_CONFIG, ~/.config/hermes/hermes.yaml,
                  ./hermes.yaml, /etc/hermes/hermes.yaml); hermes.env beside it is read too
  -h, --help      this help

Exit codes: 0 ok, 1 failure, 2 usage error, 3 daemon not reachable.
`;

/** `start`: that process ends on its own once the daemon has stopped, and its output is the daemon's log. */
let runsDaemon = false;

/**
 * Loads a command that runs the daemon's code (the config loader, the store: ~1 MB) with V8's code
 * cache on. The client commands leave it off: their ~25 kB compile faster than the cache's set-up.
 */
function daemonCode<T>(load: () => Promise<T>): Promise<T> {
  useCompileCache();
  return load();
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; args: string[] }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  runsDaemon = command === "start";
  if (!runsDaemon) endQuietlyOnClosedPipe();
  if (values.version) return print("0.1.0");
  if (values.help || !command || command === "help") return print(HELP);
  checkPositionals(command, rest);
  if ((command === "ask" || command === "chat") && values.session !== undefined) checkSessionName(values.session);
  if (command === "setup") return (await import("./setup-command.js")).setupCommand(values, rest);
  if (command === "connector-test") return (await daemonCode(() => import("./connector-test.js"))).connectorTest(rest, values.options);
  const configPath = findConfigPath(values.config);
  loadEnvFile(configPath);
  switch (command) {
    case "start":
      return (await daemonCode(() => import("./daemon-commands.js"))).start(configPath);
    case "config":
      if (rest[0] !== "check") throw new UsageError("usage: hermes config check");
      return (await daemonCode(() => import("./daemon-commands.js"))).configCheck(configPath);
    case "doctor":
      return (await daemonCode(() => import("./doctor.js"))).doctor(configPath);
    case "chat":
      return withClient(configPath, async (c) => (await import("./chat.js")).chat(c, values.session ?? "default"));
    case "ask":
      return ask(configPath, rest, values);
    case "usage":
      return usageCommand(configPath, values);
    case "audit":
      if (values.limit !== undefined && !(Number.isInteger(Number(values.limit)) && Number(values.limit) > 0))
        throw new UsageError("--limit must be a positive integer");
      return withClient(configPath, async (c) => (await import("./admin.js")).admin(c, command, rest, values));
    case "status":
    case "approvals":
    case "schedules":
    case "tools":
      return withClient(configPath, async (c) => (await import("./admin.js")).admin(c, command, rest, values));
    case "sessions":
      if (values.limit !== undefined && !(Number.isInteger(Number(values.limit)) && Number(values.limit) > 0))
        throw new UsageError("--limit must be a positive integer");
      return withClient(configPath, async (c) => (await import("./sessions.js")).sessionsCommand(c, rest, values));
    case "memory":
      return withClient(configPath, async (c) => (await import("./sessions.js")).memoryCommand(c, rest, values));
    case "backup":
      return (await daemonCode(() => import("./backup.js"))).backupCommand(configPath, rest[0]);
    case "restore":
      return (await daemonCode(() => import("./backup.js"))).restoreCommand(configPath, rest[0]);
    case "skills":
      return (await daemonCode(() => import("./skills.js"))).skillsCommand(configPath, rest, values.json === true);
    case "pair":
      return pairCommand(configPath, rest, values);
    case "export":
      return (await daemonCode(() => import("./export.js"))).exportCommand(configPath, values);
    case "search":
      return (await daemonCode(() => import("./search.js"))).searchCommand(configPath, rest, values);
    default:
      throw new UsageError(`unknown command '${command}'; see \`hermes --help\``);
  }
}

async function ask(configPath: string, rest: string[], values: CliValues): Promise<number> {
  const text = rest.join(" ").trim();
  const filePath = values.audio ?? values.image;
  if (!text && !filePath)
    throw new UsageError("usage: hermes ask TEXT [--session NAME] [--yes|--no] [--json] [--audio FILE | --image FILE]");
  if (values.yes && values.no) throw new UsageError("--yes and --no exclude each other");
  if (values.audio && values.image) throw new UsageError("--audio and --image exclude each other");
  try {
    return await askOnce(configPath, text, filePath, values);
  } catch (err) {
    // `--json` ends with an `error` line whatever went wrong (SPEC §2): no daemon, a file it could not send.
    if (values.json && !(err as { reportedAsJson?: boolean }).reportedAsJson) {
      const code = err instanceof DaemonUnreachable ? "unreachable" : "failed";
      process.stdout.write(`${JSON.stringify(errorLine(code, err))}\n`);
    }
    throw err;
  }
}

async function askOnce(configPath: string, text: string, filePath: string | undefined, values: CliValues): Promise<number> {
  const bytes = filePath ? await (await import("./upload.js")).readFileToSend(filePath) : undefined;
  return withClient(configPath, async (client) => {
    const file =
      filePath && bytes ? await (await import("./upload.js")).upload(client, bytes, filePath, values.audio ? "audio" : "image") : undefined;
    const end = await runMessage(client, values.session ?? "default", text, {
      file,
      json: values.json === true,
      stream: false,
      confirm: confirmFor(values),
    });
    const failed = ["model_error", "error", "interrupted", "refused"].includes(end.stopReason);
    return failed ? EXIT.failure : EXIT.ok;
  });
}

async function pairCommand(configPath: string, rest: string[], values: CliValues): Promise<number> {
  const platform = rest[0];
  const timeoutS = values["timeout-s"] === undefined ? 600 : Number(values["timeout-s"]);
  if ((platform !== "telegram" && platform !== "discord") || rest.length > 1 || !(timeoutS > 0))
    throw new UsageError("usage: hermes pair telegram|discord [--name NAME] [--timeout-s 600]");
  return (await import("./pair.js")).pair(configPath, platform, { name: values.name, timeoutS });
}

async function usageCommand(configPath: string, values: CliValues): Promise<number> {
  const { usage, UsageArgError } = await import("./usage.js");
  try {
    return await withClient(configPath, (client) => usage(client, values));
  } catch (err) {
    if (err instanceof UsageArgError) throw new UsageError(err.message);
    throw err;
  }
}

async function withClient(configPath: string, body: (client: Client) => Promise<number>): Promise<number> {
  const client = await Client.connect(await socketPathOf(configPath)).catch((err: unknown) => {
    // Without a config the socket is the default one, relative to the current folder: say so.
    if (!(err instanceof DaemonUnreachable) || process.env.HERMES_SOCKET || existsSync(configPath)) throw err;
    throw new DaemonUnreachable(
      err.socketPath,
      err.code,
      `No config file was found (none at ${configPath}), so that is the default socket, in the current folder: pass --config PATH, or write a config with \`hermes setup\`.`,
    );
  });
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

main(process.argv.slice(2)).then(finish, (err: unknown) => finish(failure(err)));

function failure(err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(`hermes: ${err.message}\n`);
    return EXIT.usage;
  }
  if (err instanceof DaemonUnreachable) {
    process.stderr.write(`${err.message}\n`);
    return EXIT.unreachable;
  }
  // Anything else, a daemon this user may not talk to (DaemonForbidden) among it, is an ordinary failure.
  process.stderr.write(`hermes: ${err instanceof Error ? err.message : String(err)}\n`);
  return EXIT.failure;
}

/**
 * A command leaves once its output is written. A process that ends by running out of work disposes of
 * V8's heap first, which `process.exit` skips. Writes to a pipe, a file or a terminal are synchronous on
 * Linux; the callbacks wait for any that is not. `start` ends on its own, after the daemon has stopped.
 */
function finish(code: number): void {
  process.exitCode = code;
  if (runsDaemon) return;
  let unflushed = 2;
  const flushed = () => {
    if (--unflushed === 0) process.exit();
  };
  process.stdout.write("", flushed);
  process.stderr.write("", flushed);
}
