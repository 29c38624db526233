import type { Config } from "../config/schema.js";
import type { McpHub, McpHubDeps } from "../mcp/hub.js";

/**
 * The MCP hub, imported (with the MCP SDK behind it) only when the config has servers. A reload's hub takes
 * over from `previous` the servers whose settings did not change.
 */
export async function loadMcpHub(config: Config, deps: McpHubDeps, previous?: McpHub): Promise<McpHub | undefined> {
  if (Object.keys(config.mcp.servers).length === 0) return undefined;
  const { createMcpHub } = await import("../mcp/hub.js");
  return createMcpHub(config, deps, previous);
}
