import { MCP_SEPARATOR } from "../config/schema.js";
import { isEnabled } from "./names.js";
import type { McpServerReport } from "./types.js";

/**
 * Why an enabled `<server>__<tool>` is missing when its server never connected (down since the start, or
 * refusing the token), so that the model and the owner read the cause instead of "no tool named …".
 * Undefined when the name belongs to no configured server, or its server is connected.
 */
export function notConnectedText(name: string, servers: McpServerReport[], enabled: readonly string[]): string | undefined {
  if (!isEnabled(name, enabled)) return undefined;
  const server = servers.find((s) => name.startsWith(`${s.name}${MCP_SEPARATOR}`));
  if (!server || server.connected) return undefined;
  return `error: server ${server.name} is not connected: ${server.last_error ?? server.state}`;
}
