import { z } from "./zod.js";

/** Every tool hermes knows. `tools.enabled` may only name these. */
export const TOOL_NAMES = [
  "clock",
  "notes",
  "memory",
  "remind",
  "read_file",
  "list_files",
  "write_file",
  "shell",
  "http_get",
  "send_message",
  "weather",
  "calendar",
  "feeds",
  "web_search",
  "recall",
  "skill",
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export const DEFAULT_TOOLS: ToolName[] = [
  "clock",
  "notes",
  "remind",
  "read_file",
  "list_files",
  "write_file",
  "http_get",
  "weather",
  "recall",
  "skill",
];

/** Names the model sees for an MCP server's tools: `<server>__<tool>`. */
export const MCP_SEPARATOR = "__";

/** A built-in tool's exact name, or an MCP tool's `<server>__<tool>` name or `*` glob (`home__*`). */
export const enabledEntry = () =>
  z.string().superRefine((entry, ctx) => {
    if (entry.includes(MCP_SEPARATOR)) {
      if (!/^[A-Za-z0-9_*-]+$/.test(entry))
        ctx.addIssue({ code: "custom", message: `expected <server>__<tool> of letters, digits, '_', '-' or '*'` });
      return;
    }
    if (!(TOOL_NAMES as readonly string[]).includes(entry)) {
      const hint = entry.includes("*") ? "; globs match MCP tools only, as in <server>__*" : "";
      ctx.addIssue({
        code: "custom",
        message: `unknown tool '${entry}'; expected one of ${TOOL_NAMES.join(", ")} or <server>__<tool>${hint}`,
      });
    }
  });

/**
 * Whether a list of tool entries (`agent.confirm`) names the tool `name`: exactly, or an MCP tool by a
 * `*` glob (`home__*`), as `tools.enabled` does.
 */
export function listsTool(entries: readonly string[], name: string): boolean {
  return entries.some((entry) => entry === name || (entry.includes(MCP_SEPARATOR) && globMatches(entry, name)));
}

/** Whether the `*` glob `pattern` matches all of `name`; a pattern without `*` matches nothing here. */
function globMatches(pattern: string, name: string): boolean {
  if (!pattern.includes("*")) return false;
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`).test(name);
}
