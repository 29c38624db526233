import { stringify } from "yaml";
import { blamePlugin } from "../../connectors/plugins/faults.js";
import { loadConfig, maskSecrets } from "../config/load.js";
import type { Core } from "../connector.js";
import { startIdleTrim } from "../daemon/idle-trim.js";
import { ConfigError } from "../errors.js";
import { compileCacheReport, flushCompileCache } from "./compile-cache.js";
import { pruneCompileCache } from "./compile-cache-sweep.js";

/** The longest interval Node's timers take (~24.8 days): the keep-alive timer does nothing when it fires. */
const KEEP_ALIVE_MS = 2 ** 31 - 1;

/** `hermes start`: the daemon in the foreground until SIGTERM/SIGINT; SIGHUP reloads the config. */
export async function start(configPath: string): Promise<number> {
  const { startDaemon } = await import("../daemon/daemon.js");
  // One handler per signal for the whole life of the process: removing a listener can drop a signal
  // that is already pending. Signals that arrive while starting are held until the daemon is up.
  let handle: ((signal: NodeJS.Signals) => void) | undefined;
  const early: NodeJS.Signals[] = [];
  for (const s of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.on(s, (signal) => (handle ? handle(signal) : early.push(signal)));
  }
  let daemon: Awaited<ReturnType<typeof startDaemon>> | undefined;
  // From the start: a plugin's timer may fire while the other connectors are still starting.
  catchEscapes(() => daemon?.core.log);
  try {
    daemon = await startDaemon(configPath, { ownsProcess: true });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`hermes: invalid config\n${err.message}\n`);
      return 1;
    }
    const message = err instanceof Error ? err.message : String(err);
    const hint = /database is locked|SQLITE_BUSY/i.test(message)
      ? "\nAnother process holds the database open for writing (a second hermes?). Stop it, then start hermes again."
      : "";
    process.stderr.write(`hermes: cannot start: ${message}${hint}\n`);
    return 1;
  }
  const running = daemon;
  const log = running.core.log;
  log.debug({ ...compileCacheReport() }, "compile cache");
  // Right after READY, with what the start left behind (which the first idle trim gives back): at idle,
  // the pass's own work held ~1 MB more on Node 24.
  const removed = pruneCompileCache();
  log.debug({ removed: removed ?? 0, swept: removed !== undefined }, "compile cache pruned");
  setTimeout(() => log.debug({ ...flushCompileCache() }, "compile cache flushed"), 1000).unref();
  const idleTrim = startIdleTrim({ log });
  // The daemon runs until it is told to stop, also when nothing else keeps Node's loop alive: with the CLI
  // socket off and no chat connector or HTTP door, only cron is left, and with no job due it has no timer.
  const keepAlive = setInterval(() => {}, KEEP_ALIVE_MS);
  return new Promise<number>((resolve) => {
    let stopping = false;
    // Everything is closed; a library timer that outlives its owner must not keep a stopped daemon alive.
    const exitSoon = (code: number) => {
      resolve(code);
      setTimeout(() => {
        log.warn("something kept the stopped process alive; exiting");
        log.flush(() => process.exit(code));
      }, 2000).unref();
    };
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      idleTrim.stop();
      clearInterval(keepAlive);
      log.info({ signal }, "shutdown requested");
      running.stop().then(
        () => exitSoon(0),
        (err: unknown) => {
          log.error({ err }, "error during shutdown");
          exitSoon(1);
        },
      );
    };
    handle = (signal) => (signal === "SIGHUP" ? void running.reload() : shutdown(signal));
    for (const signal of early.splice(0)) handle(signal);
  });
}

/**
 * Errors nobody caught. One thrown or rejected in a plugin's own code (its timer, its event handler, a
 * promise it never awaited) stops that plugin only (connectors/plugins/faults.ts). Any other uncaught
 * exception exits, so that systemd restarts a clean process; any other unhandled rejection is logged.
 * Before the daemon is up, both exit, as Node itself would.
 */
function catchEscapes(log: () => Core["log"] | undefined): void {
  const early = (what: string, err: unknown) => {
    process.stderr.write(`hermes: ${what} while starting: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  };
  process.on("unhandledRejection", (err) => {
    if (blamePlugin("unhandled rejection", err)) return;
    const l = log();
    if (!l) return early("unhandled rejection", err);
    l.error({ err }, "unhandled rejection (kept running)");
  });
  process.on("uncaughtException", (err) => {
    if (blamePlugin("uncaught error", err)) return;
    const l = log();
    if (!l) return early("uncaught exception", err);
    l.fatal({ err }, "uncaught exception; exiting so systemd restarts a clean process");
    process.exit(1);
  });
}

/** `hermes config check`: validate, then print the effective config with secrets masked. */
export async function configCheck(configPath: string): Promise<number> {
  try {
    const { config, locate, secrets } = loadConfig(configPath);
    // A plugin that cannot be loaded fails the check as it would fail the start.
    if (config.connectors.plugins.length)
      await (await import("../../connectors/plugins/load.js")).loadPlugins(config.connectors.plugins, configPath, locate, {
        strictSchemas: true,
      });
    process.stdout.write(`# ${configPath}: valid\n${stringify(maskSecrets(config, secrets))}`);
    return 0;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 1;
  }
}
