import type { Logger } from "pino";
import type { EndpointConfig, ModelConfig } from "../config/schema.js";
import { applyServerWindows } from "./context-window.js";
import { createModelChain } from "./failover.js";
import { withToolCallFormat } from "./format.js";
import { createOllamaClient } from "./ollama.js";
import type { ModelChain, ModelClient } from "./types.js";

/** The openai SDK is loaded only for the openai provider: an Ollama setup does not pay for it. */
export async function createModelClient(cfg: EndpointConfig): Promise<ModelClient> {
  const client =
    cfg.provider === "ollama" ? createOllamaClient(cfg) : (await import("./openai.js")).createOpenAIClient(cfg, { stream: cfg.stream });
  return withToolCallFormat(client, cfg.tool_call_format);
}

export interface ModelParts {
  chain: ModelChain;
  /** Reads each endpoint's real context window and budgets to it; for the background after start. */
  readWindows: () => Promise<void>;
}

/**
 * The primary and its fallbacks as one chain. `client` replaces the configured endpoints (embedding,
 * the benchmark's instant model).
 */
export async function createModel(
  cfg: ModelConfig,
  o: { usedToday: (endpoint: string, model: string) => number; log: Logger; client?: ModelClient },
): Promise<ModelParts> {
  const chainOptions = { retryPrimaryAfterMs: cfg.retry_primary_after_s * 1000, usedToday: o.usedToday, log: o.log };
  if (o.client) return { chain: createModelChain([{ client: o.client, dailyTokens: 0 }], chainOptions), readWindows: async () => {} };
  const configs: EndpointConfig[] = [cfg, ...cfg.fallbacks];
  const clients = await Promise.all(configs.map(createModelClient));
  const endpoints = clients.map((client, i) => ({ client, dailyTokens: (configs[i] as EndpointConfig).daily_tokens }));
  return {
    chain: createModelChain(endpoints, chainOptions),
    readWindows: () =>
      applyServerWindows(
        clients.map((client, i) => ({ client, cfg: configs[i] as EndpointConfig })),
        o.log,
      ),
  };
}
