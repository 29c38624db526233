import type { Config } from "../config/schema.js";
import type { Connector, Core } from "../connector.js";

/**
 * Loads the connectors the config enables. Chat connectors are imported only when enabled,
 * so a disabled Discord costs nothing.
 */
export async function loadConnectors(core: Core, config: Config): Promise<Connector[]> {
  const out: Connector[] = [];
  const c = config.connectors;
  if (c.cli.enabled) {
    const { createCliConnector } = await import("../../connectors/cli.js");
    out.push(createCliConnector(core, c.cli.socket));
  }
  if (c.telegram.enabled) {
    const { createTelegramConnector } = await import("../../connectors/telegram.js");
    out.push(createTelegramConnector(core, c.telegram));
  }
  if (c.cron.enabled) {
    const { createCronConnector } = await import("../../connectors/cron.js");
    out.push(createCronConnector(core, config));
  }
  if (c.discord.enabled) {
    const { createDiscordConnector } = await import("../../connectors/discord.js");
    out.push(createDiscordConnector(core, c.discord));
  }
  return out;
}
