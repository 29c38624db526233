import { existsSync } from "node:fs";
import type { LoadedConfig } from "../config/load.js";
import type { DaemonStatus } from "../connector.js";
import { ConfigError } from "../errors.js";
import { Client } from "./client.js";
import type { Check } from "./doctor-check.js";

/** One line per connector plugin: whether it loads (module, version), and its health when the daemon runs. */
export async function checkPlugins(loaded: LoadedConfig): Promise<Check[]> {
  const { config } = loaded;
  const { loadPlugins } = await import("../../connectors/plugins/load.js");
  const running = await daemonConnectors(config.connectors.cli.socket);
  const checks: Check[] = [];
  for (const entry of config.connectors.plugins) {
    const name = `plugin ${entry.name}`;
    try {
      const [plugin] = await loadPlugins(
        [entry],
        loaded.file,
        (path) => loaded.locate?.(["connectors", "plugins", config.connectors.plugins.indexOf(entry), ...path.slice(3)]) ?? loaded.file,
        { strictSchemas: true },
      );
      const live = running?.find((c) => c.name === entry.name);
      const health = live ? `; ${live.ok ? "healthy" : "down"}: ${live.detail}` : running ? "; not running in the daemon (restart it)" : "";
      const outcome = live && !live.ok ? "warn" : "ok";
      checks.push({
        name,
        outcome,
        detail: `module ${entry.module} ${plugin?.version ?? "-"} loads (api 1)${health}`,
        ...(outcome === "warn" && { fix: "see the daemon's log for the plugin's error" }),
      });
    } catch (err) {
      const detail = err instanceof ConfigError ? err.message : String(err);
      checks.push({ name, outcome: "fail", detail, fix: "see the fix named above; `hermes config check` fails the same way" });
    }
  }
  return checks;
}

async function daemonConnectors(socket: string): Promise<DaemonStatus["connectors"] | undefined> {
  if (!existsSync(socket)) return undefined;
  try {
    const client = await Client.connect(socket);
    const reply = await client.call({ op: "status" });
    client.close();
    return reply.type === "result" ? (reply.data as DaemonStatus).connectors : undefined;
  } catch {
    return undefined;
  }
}
