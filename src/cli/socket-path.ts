import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { substituteEnvRefs } from "../config/env.js";

/** Where the CLI looks for the config: --config, $HERMES_CONFIG, ./hermes.yaml, /etc/hermes/hermes.yaml. */
export function findConfigPath(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit) return explicit;
  if (env.HERMES_CONFIG) return env.HERMES_CONFIG;
  if (existsSync("hermes.yaml")) return "hermes.yaml";
  return "/etc/hermes/hermes.yaml";
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
