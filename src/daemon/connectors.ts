import type { PluginReload } from "../../connectors/plugins/reload.js";
import type { LoadedConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import type { Connector, Core } from "../connector.js";

/**
 * Loads the connectors the config enables. Chat connectors are imported only when enabled,
 * so a disabled Discord costs nothing; plugins (and the chat core they share) only when configured.
 */
export async function loadConnectors(core: Core, config: Config, loaded?: Pick<LoadedConfig, "file" | "locate">): Promise<Connector[]> {
  const c = config.connectors;
  // Imported together: their file reads overlap instead of queueing one behind the other at start.
  const [...built] = await Promise.all([
    c.cli.enabled && import("../../connectors/cli/index.js").then((m) => () => m.createCliConnector(core, c.cli.socket)),
    c.telegram.enabled && import("../../connectors/telegram/index.js").then((m) => () => m.createTelegramConnector(core, c.telegram)),
    c.cron.enabled && import("../../connectors/cron/index.js").then((m) => () => m.createCronConnector(core, config)),
    c.discord.enabled && import("../../connectors/discord/index.js").then((m) => () => m.createDiscordConnector(core, c.discord)),
    c.http.enabled && import("../../connectors/http/index.js").then((m) => () => m.createHttpConnector(core, c.http)),
    c.email.enabled && import("../../connectors/email/built-in.js").then((m) => () => m.createEmailConnector(core)),
  ]);
  const plugins = c.plugins.length
    ? await (await import("../../connectors/plugins/index.js")).createPluginConnectors(core, loaded?.file ?? "hermes.yaml", loaded?.locate)
    : [];
  return [...built.flatMap((create) => (create ? [create()] : [])), ...plugins];
}

/** Says loudly when nothing can take a message: no connector enabled, or every one failed to start. */
export function warnIfNoWorkingConnector(connectors: Connector[], log: Core["log"]): void {
  const health = connectors.map((c) => ({ name: c.name, ...c.health() }));
  if (health.some((h) => h.ok)) return;
  if (!health.length)
    return void log.error("no connector is enabled: nothing can reach hermes; enable one in hermes.yaml (connectors.cli.enabled: true)");
  log.error({ connectors: health }, "no connector is working: nothing can reach hermes until one is fixed (see each connector's detail)");
}

/**
 * What a reload does to `connectors.plugins`, prepared before anything changes (the new modules loaded;
 * throws a ConfigError for one that cannot be used); undefined when no plugin is or was configured.
 */
export async function preparePluginReload(core: Core, running: Config, next: LoadedConfig): Promise<PluginReload | undefined> {
  if (!running.connectors.plugins.length && !next.config.connectors.plugins.length) return undefined;
  return (await import("../../connectors/plugins/reload.js")).preparePluginReload(core, running.connectors.plugins, next);
}
