import type { Logger } from "../log.js";
import type { McpServerReport } from "../mcp/types.js";
import { promptTokens, toolTokens } from "../model/tokens.js";
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

/**
 * When the system prompt and the tool signatures leave a chat little of the prompt's room (the window less
 * the answer's share), says so with the fix: below that, every request is cut to its newest turn, or over.
 */
export function warnOfSmallRoom(system: string, specs: ToolSpec[], contextTokens: number, outputTokens: number, log: Logger): void {
  const room = contextTokens - outputTokens;
  const fixed = promptTokens([{ role: "system", content: system }], specs);
  if (fixed <= room * 0.6) return;
  const none = fixed >= room;
  log[none ? "error" : "warn"](
    { fixedTokens: fixed, roomTokens: room },
    `the system prompt and tool signatures take ~${fixed} of the prompt's ${room} tokens (model.context_tokens less max_output_tokens): ${none ? "no" : "little"} room is left for the chat; raise model.context_tokens (and the model server's window), lower model.max_output_tokens or enable fewer tools`,
  );
}
