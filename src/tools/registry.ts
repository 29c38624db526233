import { MCP_SEPARATOR, type ToolName } from "../config/schema.js";
import { withSettings } from "./define.js";
import type { AnyTool, ToolDeps } from "./types.js";

type ToolModule = { createTool(name: ToolName, deps: ToolDeps): AnyTool };

/**
 * Each built-in tool is imported when the config enables it, so a disabled tool costs neither start-up
 * time nor memory (the lazy-loading rule in docs/architecture.md).
 */
const MODULES: Partial<Record<ToolName, () => Promise<ToolModule>>> = {
  clock: () => import("../../tools/clock.js"),
  notes: () => import("../../tools/notes.js"),
  memory: () => import("../../tools/memory.js"),
  remind: () => import("../../tools/remind.js"),
  read_file: () => import("../../tools/files.js"),
  list_files: () => import("../../tools/files.js"),
  write_file: () => import("../../tools/files.js"),
  shell: () => import("../../tools/shell.js"),
  http_get: () => import("../../tools/http-get.js"),
  send_message: () => import("../../tools/send-message.js"),
  weather: () => import("../../tools/weather.js"),
  calendar: () => import("../../tools/calendar.js"),
  feeds: () => import("../../tools/feeds.js"),
  web_search: () => import("../../tools/web-search.js"),
  recall: () => import("../../tools/recall.js"),
  skill: () => import("../skills/tool.js"),
};

export interface ToolSet {
  tools: Map<string, AnyTool>;
  /** Enabled in the config but not part of this build. */
  unavailable: string[];
}

/** Loads the enabled built-in tools; MCP entries (`<server>__…`) are the MCP hub's to resolve. */
export async function loadTools(enabled: readonly string[], deps: ToolDeps, extra: AnyTool[] = []): Promise<ToolSet> {
  const tools = new Map<string, AnyTool>();
  const unavailable: string[] = [];
  const names = [...new Set(enabled.filter((n) => !n.includes(MCP_SEPARATOR)))] as ToolName[];
  // Imported together: their file reads overlap instead of queueing one behind the other at start.
  const modules = await Promise.all(names.map((name) => MODULES[name]?.()));
  names.forEach((name, i) => {
    const module = modules[i];
    if (!module) unavailable.push(name);
    else tools.set(name, withSettings(module.createTool(name, deps), settingsOf(name, deps)));
  });
  for (const tool of extra) tools.set(tool.name, tool);
  return { tools, unavailable };
}

function settingsOf(name: ToolName, deps: ToolDeps): { max_result_chars?: number; timeout_s?: number } | undefined {
  const family = name === "read_file" || name === "list_files" || name === "write_file" ? "files" : name;
  return deps.config.tools[family as keyof typeof deps.config.tools] as { max_result_chars?: number; timeout_s?: number };
}
