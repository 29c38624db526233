import type { Logger } from "../log.js";
import type { McpServerReport } from "../mcp/types.js";
import { toolTokens } from "../model/tokens.js";
import type { ToolSpec } from "../model/types.js";

/** Warns when the tool signatures take more than a quarter of the context window, naming each server's share. */
export function warnOfToolCost(specs: ToolSpec[], servers: McpServerReport[], contextTokens: number, log: Logger): void {
  const tokens = toolTokens(specs);
  if (tokens <= contextTokens / 4) return;
  const byServer = Object.fromEntries(servers.map((s) => [s.name, s.prompt_tokens]));
  log.warn(
    { toolTokens: tokens, contextTokens, byServer },
    `tool signatures take ~${tokens} of ${contextTokens} context tokens (over a quarter); enable fewer MCP tools in tools.enabled (see \`hermes tools\`)`,
  );
}
