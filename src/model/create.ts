import type { ModelConfig } from "../config/schema.js";
import { withToolCallFormat } from "./format.js";
import { createOllamaClient } from "./ollama.js";
import { createOpenAIClient } from "./openai.js";
import type { ModelClient } from "./types.js";

export function createModelClient(cfg: ModelConfig): ModelClient {
  const client = cfg.provider === "ollama" ? createOllamaClient(cfg) : createOpenAIClient(cfg, { stream: cfg.stream });
  return withToolCallFormat(client, cfg.tool_call_format);
}
