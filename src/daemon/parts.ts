/** The parts a config makes (tools, model, skills) and the state that holds them, rebuilt by a reload. */
import type { LoadedConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import type { Logger } from "../log.js";
import type { McpHub } from "../mcp/hub.js";
import { createModel, createModelClient } from "../model/create.js";
import type { ModelChain, ModelClient, ToolSpec } from "../model/types.js";
import { startSkills } from "../skills/startup.js";
import type { SkillSet } from "../skills/types.js";
import { startOfToday } from "../store/usage.js";
import { toolSpec } from "../tools/define.js";
import { loadTools } from "../tools/registry.js";
import type { AnyTool, ToolDeps } from "../tools/types.js";
import { loadMcpHub } from "./mcp-hub.js";

export interface State {
  loaded: LoadedConfig;
  /** The enabled built-in (and embedder's) tools. */
  builtins: Map<string, AnyTool>;
  /** Those plus the enabled tools of MCP servers: what the gate may call. */
  tools: Map<string, AnyTool>;
  mcp?: McpHub;
  /** The tools' JSON Schemas, made at the first call (the first model request), not on the way to READY. */
  specs: () => ToolSpec[];
  model: ModelChain;
  readWindows: () => Promise<void>;
  /** `model.vision_model`'s client, when configured. */
  visionModel?: ModelClient;
  /** The skills from `skills.dirs`, when any folder of them exists. */
  skills?: SkillSet;
}

/** What building the parts needs besides the config: the tools' dependencies, the log, an embedder's tools and model. */
export interface PartsDeps {
  tools: Omit<ToolDeps, "config">;
  log: Logger;
  extraTools?: AnyTool[];
  model?: ModelClient;
}

/** The state of a loaded config: its MCP servers (connecting in the background), tools, model and skills. */
export async function loadState(loaded: LoadedConfig, deps: PartsDeps): Promise<State> {
  const mcp = await loadMcpHub(loaded.config, { store: deps.tools.store, log: deps.log, locate: loaded.locate, secrets: loaded.secrets });
  const state: State = { loaded, mcp, ...(await buildParts(loaded.config, deps)) };
  withMcpTools(state);
  mcp?.onChange(() => state.mcp === mcp && withMcpTools(state));
  return state;
}

export async function buildParts(config: Config, deps: PartsDeps) {
  const { log, extraTools = [], model } = deps;
  const skills = await startSkills(config, log);
  const { tools, unavailable } = await loadTools(config.tools.enabled, { ...deps.tools, config, skills: () => skills }, extraTools);
  // With nothing to read, the tool would only cost the prompt its signature. A skill hidden from the model
  // but sent with /<skill> is read (its files) through it in that conversation: it keeps the tool.
  if (!skills?.skills.some((s) => !s.hiddenFromModel || s.userInvocable)) tools.delete("skill");
  if (unavailable.length) log.warn({ tools: unavailable }, "enabled tools that this version does not provide are skipped");
  const usedToday = (endpoint: string, model: string) => deps.tools.store.usage.endpointTokensSince(endpoint, model, startOfToday());
  const parts = await createModel(config.model, { usedToday, log, client: model });
  return {
    builtins: tools,
    tools,
    specs: lazySpecs(tools),
    model: parts.chain,
    readWindows: parts.readWindows,
    visionModel: config.model.vision_model ? await createModelClient({ ...config.model, name: config.model.vision_model }) : undefined,
    skills,
  };
}

/** Adds the MCP servers' enabled tools to the built-in ones; called again whenever a server's list changes. */
export function withMcpTools(state: State): void {
  if (!state.mcp) return;
  const tools = new Map(state.builtins);
  for (const tool of state.mcp.tools()) if (!tools.has(tool.name)) tools.set(tool.name, tool);
  state.tools = tools;
  state.specs = lazySpecs(tools);
}

/** The tools' JSON Schemas, made at the first call and kept. */
function lazySpecs(tools: Map<string, AnyTool>): () => ToolSpec[] {
  let specs: ToolSpec[] | undefined;
  return () => (specs ??= [...tools.values()].map(toolSpec));
}
