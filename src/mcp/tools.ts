import type { McpServerConfig } from "../config/schema.js";
import { z } from "../config/zod.js";
import { ToolError } from "../errors.js";
import { DEFAULT_MAX_RESULT_CHARS, type Tool } from "../tools/types.js";
import { resultText } from "./result.js";
import { compileValidator, trimDescription, trimSchema } from "./schema.js";
import type { McpSession, McpToolInfo } from "./types.js";

type Args = Record<string, unknown>;

/** One MCP tool as a hermes tool: its arguments checked against the server's schema, its call gated. */
export function createMcpTool(modelName: string, info: McpToolInfo, session: McpSession, cfg: McpServerConfig): Tool<Args> {
  const ask = cfg.confirm === "always" || (cfg.confirm === "auto" && !info.readOnlyHint);
  return {
    name: modelName,
    description: trimDescription(info.description) || `${info.name} (from MCP server ${session.name})`,
    input: argumentsSchema(info.inputSchema),
    parameters: trimSchema(info.inputSchema),
    readOnly: info.readOnlyHint,
    needsConfirmation: ask,
    confirmReason: ask ? confirmReason(session.name, cfg) : undefined,
    maxResultChars: cfg.max_result_chars ?? DEFAULT_MAX_RESULT_CHARS,
    timeoutMs: cfg.timeout_s * 1000,
    source: `mcp:${session.name}`,
    run: async (args, ctx) => {
      const result = await session.call(info.name, args, ctx.signal);
      const text = resultText(result);
      if (result.isError) throw new ToolError(text);
      return text;
    },
  };
}

function confirmReason(server: string, cfg: McpServerConfig): string {
  return cfg.confirm === "always"
    ? `every tool of MCP server ${server} asks first, as its confirm is always`
    : `MCP server ${server} does not mark this tool read-only, and its confirm is auto`;
}

/** A zod schema whose check is the server's JSON Schema, run by ajv (compiled at the first call). */
function argumentsSchema(schema: Record<string, unknown>): z.ZodType<Args> {
  let validate: ((args: unknown) => string[]) | undefined;
  return z
    .custom<Args>((v) => v !== null && typeof v === "object" && !Array.isArray(v), "expected an object of named arguments")
    .superRefine((args, ctx) => {
      validate ??= compileValidator(schema);
      for (const message of validate(args)) ctx.addIssue({ code: "custom", message });
    });
}
