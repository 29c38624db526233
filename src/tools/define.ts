import { z } from "zod";
import type { ToolSpec } from "../model/types.js";
import { DEFAULT_MAX_RESULT_CHARS, DEFAULT_TOOL_TIMEOUT_MS, type Tool, type ToolDefinition } from "./types.js";

/** Builds a Tool with safe defaults: not read-only, no confirmation, 4000-char results, 30 s timeout. */
export function defineTool<I>(def: ToolDefinition<I>): Tool<I> {
  return {
    name: def.name,
    description: def.description,
    input: def.input,
    readOnly: def.readOnly ?? false,
    needsConfirmation: def.needsConfirmation ?? false,
    maxResultChars: def.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
    timeoutMs: def.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    run: async (args, ctx) => def.run(args, ctx),
  };
}

/** Applies `tools.<name>.max_result_chars` / `timeout_s` overrides from the config. */
export function withSettings<I>(tool: Tool<I>, settings: { max_result_chars?: number; timeout_s?: number } | undefined): Tool<I> {
  if (!settings) return tool;
  return {
    ...tool,
    maxResultChars: settings.max_result_chars ?? tool.maxResultChars,
    timeoutMs: settings.timeout_s !== undefined ? settings.timeout_s * 1000 : tool.timeoutMs,
  };
}

/** The model-facing signature: JSON Schema from the zod input, without noise a small model does not need. */
export function toolSpec(tool: Tool): ToolSpec {
  if (tool.parameters) return { name: tool.name, description: tool.description, parameters: tool.parameters };
  const schema = z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete schema.$schema;
  return { name: tool.name, description: tool.description, parameters: lean(schema) as Record<string, unknown> };
}

/** Drops what costs tokens and tells a model nothing: JavaScript's safe-integer bounds. */
function lean(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(lean);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === "maximum" || key === "minimum") && Math.abs(Number(value)) === Number.MAX_SAFE_INTEGER) continue;
    out[key] = lean(value);
  }
  return out;
}
