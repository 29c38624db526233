/** Runs the real daemon (`hermes start`) and the real CLI as child processes in a temp directory. */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, sep } from "node:path";
import Database from "better-sqlite3";
import { stringify } from "yaml";
import { createChanges, waitFor } from "./wait.js";

/** The repository root, whether this file runs from test/ (vitest) or dist/test/ (the benchmark). */
const ROOT = resolve(import.meta.dirname, import.meta.dirname.includes(`${sep}dist${sep}`) ? "../../.." : "../..");
export const CLI = join(ROOT, "dist/app/hermes.js");

const UNIT = readFileSync(join(ROOT, "deploy/hermes.service"), "utf8");

/** The unit's V8 flags, which deploy/install.sh leaves out on Node 20 (they cost it its built-in code cache). */
export const V8_ONLY_FLAGS = /^--(max-semi-space-size=|no-sparkplug$)/;

/**
 * The Node flags the installed systemd unit starts the daemon with on this Node (ExecStart of
 * deploy/hermes.service, between node and the script, less what deploy/install.sh leaves out on Node 20):
 * the tests and the bench start it so too, so that they measure what is deployed.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = nodeFlagsOf(UNIT).filter(
  (flag) => Number(process.versions.node.split(".")[0]) >= 22 || !V8_ONLY_FLAGS.test(flag),
);

/** The allocator settings of the unit's Environment= lines (MALLOC_*), which the tests and the bench give the daemon too. */
export const DAEMON_ENV: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(unitEnvironmentOf(UNIT)).filter(([name]) => name.startsWith("MALLOC_")),
);

/** The assignments of a unit's Environment= lines (unquoted words only, as the units here write them). */
export function unitEnvironmentOf(unit: string): Record<string, string> {
  const words = [...unit.matchAll(/^Environment=(.*)$/gm)].flatMap((m) => (m[1] ?? "").trim().split(/\s+/));
  return Object.fromEntries(words.map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]));
}

export function nodeFlagsOf(unit: string): string[] {
  const words = /^ExecStart=\S+ (.*)$/m.exec(unit)?.[1]?.split(/\s+/) ?? [];
  const script = words.findIndex((w) => !w.startsWith("-"));
  return words.slice(0, Math.max(0, script));
}

export function createTempDir(prefix = "hermes-test-"): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** How a test runs a command: `uid`/`gid` run it as another user (the test runs as root). */
export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  input?: string;
  uid?: number;
  gid?: number;
}

/** Runs `hermes ARGS` and collects its output. */
export function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return runNode([CLI, ...args], { ...options, env: { HERMES_CONFIG: "", ...options.env } });
}

/** Runs `node ARGS` as `runCli` runs hermes (stdin, stdout and stderr piped) and collects its output. */
export function runNode(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, args, {
      cwd: options.cwd,
      uid: options.uid,
      gid: options.gid,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    // A command that exits before reading its input (a usage error) closes the pipe: EPIPE is its business.
    child.stdin.on("error", () => {});
    child.stdin.end(options.input ?? "");
    child.on("close", (code) => resolvePromise({ code, stdout, stderr }));
  });
}

export interface Hermes {
  dir: string;
  configPath: string;
  socketPath: string;
  dbPath: string;
  process: ChildProcess;
  /** Every log line the daemon printed, parsed. */
  logs: Record<string, unknown>[];
  /** What the daemon wrote to stderr so far (nothing, while all goes well). */
  stderr(): string;
  cli(args: string[], options?: { env?: NodeJS.ProcessEnv; input?: string }): Promise<CliResult>;
  ask(text: string, ...flags: string[]): Promise<CliResult>;
  /** The first log line that matches; fails when hermes exits first or after `timeoutMs` (default WAIT_MS). */
  waitForLog(predicate: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** SIGTERM and wait for exit; resolves the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
  /** Start a new daemon on the same directory and config. */
  restart(): Promise<Hermes>;
}

type Settings = Record<string, unknown>;

export function writeConfig(dir: string, settings: Settings): string {
  const path = join(dir, "hermes.yaml");
  writeFileSync(path, stringify(settings));
  return path;
}

/** Default test settings: a model URL, info logs, everything else from the defaults. */
export function baseSettings(modelUrl: string, provider: "ollama" | "openai" = "ollama"): Settings {
  return {
    timezone: "Europe/Berlin",
    model: { provider, base_url: modelUrl, name: "hermes3:8b", retries: 2, retry_base_ms: 20, timeout_s: 20 },
    connectors: { cron: { enabled: false } },
    log: { level: "info" },
  };
}

/** Temp dirs `startHermes` made, removed when the test file is done (tests read them after a stop). */
const madeDirs = new Set<string>();

export async function startHermes(settings: Settings, options: { dir?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Hermes> {
  const dir = options.dir ?? madeDir();
  const configPath = writeConfig(dir, settings);
  return launch(dir, configPath, options.env ?? {});
}

function madeDir(): string {
  const { path } = createTempDir();
  madeDirs.add(path);
  return path;
}

/** Removes the temp dirs `startHermes` made; `dir` alone, or all of them. */
export function removeMadeDirs(dir?: string): void {
  for (const path of dir === undefined ? [...madeDirs] : [dir].filter((d) => madeDirs.has(d))) {
    rmSync(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    madeDirs.delete(path);
  }
}

/** Reads a hermes database (read-only) and closes it again, also when `read` throws. */
export function readDb<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** Daemons this test process started and that have not exited. */
const daemons = new Set<ChildProcess>();

/** Kills the daemons a test file left running (a failed test, a test that forgot one), so none outlive it. */
export function killLeftoverDaemons(): void {
  for (const child of daemons) child.kill("SIGKILL");
}
process.once("exit", killLeftoverDaemons);

/** At the end of a test file: kills what is left running, waits until it has exited, and removes the temp dirs. */
export async function cleanUpTestFile(): Promise<void> {
  const exits = [...daemons].map((child) => once(child, "exit"));
  killLeftoverDaemons();
  await Promise.all(exits);
  removeMadeDirs();
}

/** Starts `hermes start` from `cli` (the built command unless a test runs a copy of it). */
export async function launch(dir: string, configPath: string, env: NodeJS.ProcessEnv, cli = CLI): Promise<Hermes> {
  const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, cli, "start", "--config", configPath], {
    cwd: dir,
    env: { ...process.env, ...DAEMON_ENV, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  daemons.add(child);
  child.once("exit", () => daemons.delete(child));
  const logs: Record<string, unknown>[] = [];
  const changes = createChanges();
  let buffer = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        logs.push(parsed);
        changes.notify();
      } catch {
        // not a log line
      }
    }
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((r) =>
    child.on("exit", (code) => {
      exitCode = code;
      changes.notify();
      r(code);
    }),
  );
  const waitForLog = (predicate: (l: Record<string, unknown>) => boolean, timeoutMs?: number) =>
    waitFor(
      () => {
        const found = logs.find(predicate);
        if (found || exitCode === undefined) return found;
        throw new Error(`hermes exited with ${exitCode} before the log line ${String(predicate)} appeared:\n${stderr}`);
      },
      { changes, timeoutMs, message: () => `no log line matched ${String(predicate)}; the last: ${JSON.stringify(logs.at(-1))}` },
    );
  // A start on a loaded machine may take a while; the deadline still ends before vitest's hook timeout.
  await waitForLog((l) => l.msg === "hermes is ready", 28_000);
  const cliEnv = { HERMES_CONFIG: configPath };
  const hermes: Hermes = {
    dir,
    configPath,
    socketPath: join(dir, "data", "hermes.sock"),
    stderr: () => stderr,
    dbPath: join(dir, "data", "hermes.db"),
    process: child,
    logs,
    cli: (args, o = {}) => runCli(args, { cwd: dir, env: { ...cliEnv, ...o.env }, input: o.input }),
    ask: (text, ...flags) => runCli(["ask", text, ...flags], { cwd: dir, env: cliEnv }),
    waitForLog,
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
    kill: async () => {
      child.kill("SIGKILL");
      await exited;
    },
    restart: () => launch(dir, configPath, env),
  };
  return hermes;
}
