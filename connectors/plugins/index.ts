import type { Connector, Core } from "../../src/connector.js";
import { createPluginConnector } from "./connector.js";
import { type Locate, loadPlugins } from "./load.js";

export { loadPlugins } from "./load.js";

/** The configured plugins as connectors; throws a ConfigError when one cannot be used (see load.ts). */
export async function createPluginConnectors(core: Core, configFile: string, locate?: Locate): Promise<Connector[]> {
  const loaded = await loadPlugins(core.config().connectors.plugins, configFile, locate);
  return loaded.map((plugin) => createPluginConnector(core, plugin));
}
