import type { Config } from "../config/schema.js";
import { listsTool } from "../config/tool-names.js";
import { estimateTokens } from "../model/tokens.js";
import { toolSpec } from "../tools/define.js";
import type { AnyTool, ToolReport } from "../tools/types.js";

export function reportTools(tools: Iterable<AnyTool>, config: Config): ToolReport[] {
  return [...tools].map((tool) => {
    const { asks, why } = askingOf(tool, config);
    let tokens = 0;
    try {
      tokens = estimateTokens(JSON.stringify({ type: "function", function: toolSpec(tool) }));
    } catch {
      // a schema that cannot be made costs nothing until it can
    }
    return { name: tool.name, source: tool.source ?? "built-in", asks, why, prompt_tokens: tokens };
  });
}

function askingOf(tool: AnyTool, config: Config): Pick<ToolReport, "asks" | "why"> {
  if (listsTool(config.agent.confirm, tool.name)) return { asks: "always", why: "listed in agent.confirm" };
  if (typeof tool.needsConfirmation === "function") return { asks: "depends on the arguments", why: "the tool decides per call" };
  if (tool.needsConfirmation) return { asks: "always", why: tool.confirmReason ?? "the tool always asks" };
  if (tool.source?.startsWith("mcp:")) return { asks: "never", why: tool.readOnly ? "annotated readOnlyHint" : "confirm: never" };
  return { asks: "never", why: null };
}
