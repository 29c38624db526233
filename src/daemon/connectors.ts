import type { Config } from "../config/schema.js";
import type { Connector, Core } from "../connector.js";

/**
 * Loads the connectors the config enables. Chat connectors are imported only when enabled,
 * so a disabled Discord costs nothing.
 */
export async function loadConnectors(core: Core, config: Config): Promise<Connector[]> {
  const c = config.connectors;
  // Imported together: their file reads overlap instead of queueing one behind the other at start.
  const loaded = await Promise.all([
    c.cli.enabled && import("../../connectors/cli.js").then((m) => () => m.createCliConnector(core, c.cli.socket)),
    c.telegram.enabled && import("../../connectors/telegram.js").then((m) => () => m.createTelegramConnector(core, c.telegram)),
    c.cron.enabled && import("../../connectors/cron.js").then((m) => () => m.createCronConnector(core, config)),
    c.discord.enabled && import("../../connectors/discord.js").then((m) => () => m.createDiscordConnector(core, c.discord)),
    c.http.enabled && import("../../connectors/http/index.js").then((m) => () => m.createHttpConnector(core, c.http)),
  ]);
  return loaded.flatMap((create) => (create ? [create()] : []));
}
