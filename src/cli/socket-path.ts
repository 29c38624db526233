import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { parseDocument } from "yaml";

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
export function socketPathOf(configPath: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.HERMES_SOCKET) return env.HERMES_SOCKET;
  let raw: unknown = "./data/hermes.sock";
  let base = process.cwd();
  if (existsSync(configPath)) {
    base = dirname(resolve(configPath));
    const doc = parseDocument(readFileSync(configPath, "utf8"));
    raw = doc.getIn(["connectors", "cli", "socket"]) ?? raw;
  }
  const path = String(raw).replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (_m, name: string, fallback?: string) => env[name] ?? fallback ?? "",
  );
  return isAbsolute(path) ? path : resolve(base, path);
}
