import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parseEnv } from "node:util";
import { substituteEnvRefs } from "../config/env.js";

/**
 * Where the CLI looks for the config: --config, $HERMES_CONFIG, the user's own
 * ($XDG_CONFIG_HOME/hermes/hermes.yaml, by default ~/.config/hermes/hermes.yaml), ./hermes.yaml, then the
 * service's /etc/hermes/hermes.yaml. The user's file comes before ./hermes.yaml so that a personal config
 * outside the checkout wins over the tracked defaults in it. The installed command (the wrapper
 * deploy/install.sh writes sets HERMES_INSTALLED=1) skips ./hermes.yaml: run from a checkout, `sudo hermes
 * doctor` must look at the service, not at the checkout's defaults.
 */
export function findConfigPath(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit) return explicit;
  if (env.HERMES_CONFIG) return env.HERMES_CONFIG;
  const user = userConfigPath(env);
  if (user && existsSync(user)) return user;
  if (env.HERMES_INSTALLED !== "1" && existsSync("hermes.yaml")) return "hermes.yaml";
  return "/etc/hermes/hermes.yaml";
}

/** The user's config file under the XDG base directory, or undefined without a home. */
export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const base = env.XDG_CONFIG_HOME || (env.HOME ? join(env.HOME, ".config") : undefined);
  return base && isAbsolute(base) ? join(base, "hermes", "hermes.yaml") : undefined;
}

/** The secrets file that sits next to a config: hermes.yaml → hermes.env. */
export function envFileOf(configPath: string): string {
  return join(dirname(resolve(configPath)), "hermes.env");
}

/**
 * Reads the environment file next to the config (KEY=VALUE lines, as systemd's EnvironmentFile) into
 * `env`, never over a variable already set. `sudo hermes doctor` thus sees the service's tokens, and
 * `hermes start` the ones `hermes setup` wrote. A file this user cannot read is left alone.
 */
export function loadEnvFile(configPath: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const file = envFileOf(configPath);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  for (const [key, value] of Object.entries(parseEnv(text))) {
    if (env[key] === undefined) env[key] = value;
  }
  return file;
}

/**
 * The daemon's socket path from the config, read without the full validator so the client starts fast.
 * $HERMES_SOCKET overrides it.
 */
export async function socketPathOf(configPath: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (env.HERMES_SOCKET) return env.HERMES_SOCKET;
  let raw: unknown = "./data/hermes.sock";
  let base = process.cwd();
  if (existsSync(configPath)) {
    base = dirname(resolve(configPath));
    const text = readFileSync(configPath, "utf8");
    raw = quickSocket(text) ?? (await import("yaml")).parseDocument(text).getIn(["connectors", "cli", "socket"]) ?? raw;
  }
  const path = substituteEnvRefs(String(raw), env);
  return isAbsolute(path) ? path : resolve(base, path);
}

/**
 * The socket path from the common shapes of `connectors.cli` (flow map or block), without loading a
 * YAML parser: it is most of the client's start-up time. Undefined when unsure; then YAML decides.
 */
export function quickSocket(text: string): string | undefined {
  if (!/^connectors:/m.test(text)) return "./data/hermes.sock";
  if (!/^connectors:\s*(#.*)?$/m.test(text)) return undefined;
  const flow = text.match(/^ {2}cli:\s*\{([^}\n]*)\}\s*(#.*)?$/m);
  const block = text.match(/^ {2}cli:\s*\n((?: {4}.*\n?)+)/m);
  const body = flow?.[1] ?? block?.[1];
  if (body === undefined) return text.match(/^ {2}cli:/m) ? undefined : "./data/hermes.sock";
  const socket = body.match(/(?:^|[,{\s])socket:\s*("([^"]*)"|'([^']*)'|([^,}\s#]+))/);
  if (!socket) return /socket/.test(body) ? undefined : "./data/hermes.sock";
  return socket[2] ?? socket[3] ?? socket[4];
}
