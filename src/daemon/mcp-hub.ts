import type { Config } from "../config/schema.js";
import type { McpHub, McpHubDeps } from "../mcp/hub.js";

/** The MCP hub, imported (with the MCP SDK behind it) only when the config has servers. */
export async function loadMcpHub(config: Config, deps: McpHubDeps): Promise<McpHub | undefined> {
  if (Object.keys(config.mcp.servers).length === 0) return undefined;
  const { createMcpHub } = await import("../mcp/hub.js");
  return createMcpHub(config, deps);
}
