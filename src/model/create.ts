import type { ModelConfig } from "../config/schema.js";
import { withToolCallFormat } from "./format.js";
import { createOllamaClient } from "./ollama.js";
import type { ModelClient } from "./types.js";

/** The openai SDK is loaded only for the openai provider: an Ollama setup does not pay for it. */
export async function createModelClient(cfg: ModelConfig): Promise<ModelClient> {
  const client =
    cfg.provider === "ollama" ? createOllamaClient(cfg) : (await import("./openai.js")).createOpenAIClient(cfg, { stream: cfg.stream });
  return withToolCallFormat(client, cfg.tool_call_format);
}
