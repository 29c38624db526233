import type { ModelConfig } from "../config/schema.js";
import { createOllamaClient } from "./ollama.js";
import { createOpenAIClient } from "./openai.js";
import type { ModelClient } from "./types.js";

export function createModelClient(cfg: ModelConfig): ModelClient {
  return cfg.provider === "ollama" ? createOllamaClient(cfg) : createOpenAIClient(cfg, { stream: cfg.stream });
}
