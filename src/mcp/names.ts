import { MCP_SEPARATOR } from "../config/schema.js";
import { listsTool } from "../config/tool-names.js";

const MAX_TOOL_NAME = 64;

/** `<server>__<tool>` as the model sees it: only [A-Za-z0-9_-], at most 64 characters. */
export function modelToolName(server: string, tool: string): string {
  return `${server}${MCP_SEPARATOR}${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, MAX_TOOL_NAME);
}

/** Whether `tools.enabled` lists an MCP tool, exactly or by a `*` glob. Built-in entries never match. */
export function isEnabled(name: string, enabled: readonly string[]): boolean {
  return name.includes(MCP_SEPARATOR) && listsTool(enabled, name);
}

/** Model-facing names of a server's tools; names that two tools would share are refused. */
export function nameTools<T extends { name: string }>(server: string, tools: T[]): { named: Map<string, T>; collisions: string[] } {
  const named = new Map<string, T>();
  const clashing = new Set<string>();
  for (const tool of tools) {
    const name = modelToolName(server, tool.name);
    if (named.has(name) || clashing.has(name)) {
      clashing.add(name);
      named.delete(name);
    } else named.set(name, tool);
  }
  return { named, collisions: [...clashing] };
}
