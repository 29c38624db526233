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
  for (const name of ["telegram", "discord"] as const) {
    if (c[name].enabled) core.log.warn({ connector: name }, `the ${name} connector is not part of this version yet; it stays off`);
  }
  return out;
}
