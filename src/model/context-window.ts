import type { Logger } from "pino";
import type { EndpointConfig } from "../config/schema.js";
import { get, readText } from "./http.js";
import { ollamaShow } from "./ollama-show.js";
import type { ModelClient, PromptWindow, ServerWindow } from "./types.js";

/**
 * Reads the context window the server will really use: Ollama's /api/show (the model's trained length;
 * hermes sends num_ctx up to it), llama.cpp's /props (n_ctx), /v1/models (max_model_len, vLLM and
 * others), LM Studio's /api/v0/models (the loaded context length). `undefined` when none says.
 * Never throws.
 */
export async function readServerWindow(cfg: EndpointConfig, signal: AbortSignal): Promise<ServerWindow | undefined> {
  const base = cfg.base_url.replace(/\/+$/, "");
  if (cfg.provider === "ollama") return ollamaWindow(base, cfg.name, signal);
  const origin = base.replace(/\/v1$/, "");
  const auth = cfg.api_key ? { authorization: `Bearer ${cfg.api_key}` } : undefined;
  return (
    (await llamaCppWindow(origin, signal, auth)) ??
    (await modelListWindow(`${base}/models`, cfg.name, signal, auth, "max_model_len", "/v1/models max_model_len")) ??
    (await modelListWindow(`${origin}/api/v0/models`, cfg.name, signal, auth, "loaded_context_length", "LM Studio loaded context"))
  );
}

async function ollamaWindow(base: string, name: string, signal: AbortSignal): Promise<ServerWindow | undefined> {
  const info = (await ollamaShow(base, name, signal))?.model_info ?? {};
  const key = Object.keys(info).find((k) => k.endsWith(".context_length"));
  const n = key ? info[key] : undefined;
  return positive(n) ? { contextTokens: n, source: "Ollama /api/show (the model's trained context)" } : undefined;
}

async function llamaCppWindow(origin: string, signal: AbortSignal, auth?: Record<string, string>): Promise<ServerWindow | undefined> {
  const body = (await fetchJson(() => get(`${origin}/props`, signal, auth))) as
    | { n_ctx?: unknown; default_generation_settings?: { n_ctx?: unknown } }
    | undefined;
  const n = body?.default_generation_settings?.n_ctx ?? body?.n_ctx;
  return positive(n) ? { contextTokens: n, source: "llama.cpp /props n_ctx" } : undefined;
}

async function modelListWindow(
  url: string,
  name: string,
  signal: AbortSignal,
  auth: Record<string, string> | undefined,
  field: string,
  source: string,
): Promise<ServerWindow | undefined> {
  const body = (await fetchJson(() => get(url, signal, auth))) as { data?: Record<string, unknown>[] } | undefined;
  const entry = body?.data?.find?.((m) => m?.id === name);
  const n = entry?.[field] ?? (field === "loaded_context_length" ? entry?.max_context_length : undefined);
  return positive(n) ? { contextTokens: n, source } : undefined;
}

async function fetchJson(request: () => Promise<import("node:http").IncomingMessage>): Promise<unknown> {
  try {
    const res = await request();
    const text = await readText(res);
    if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) > 299) return undefined;
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function positive(n: unknown): n is number {
  return typeof n === "number" && Number.isInteger(n) && n > 0;
}

/**
 * An openai endpoint that is Ollama's OpenAI-compatible API (its root answers Ollama's GET /api/version):
 * that API takes no num_ctx, so Ollama runs the model with its own default context (OLLAMA_CONTEXT_LENGTH,
 * 2048 or 4096 tokens unless set) and cuts a longer prompt from the front without a word: the model
 * forgets the conversation and its instructions. The warning and its fix; `undefined` for anything else.
 */
export async function ollamaBehindOpenAi(cfg: EndpointConfig, signal: AbortSignal): Promise<{ warning: string; fix: string } | undefined> {
  if (cfg.provider !== "openai") return undefined;
  const origin = cfg.base_url.replace(/\/+$/, "").replace(/\/v1$/, "");
  const body = (await fetchJson(() => get(`${origin}/api/version`, signal))) as { version?: unknown } | undefined;
  if (typeof body?.version !== "string") return undefined;
  return {
    warning: `${cfg.base_url} is Ollama's OpenAI-compatible API, which ignores the context size hermes asks for (num_ctx): a prompt longer than Ollama's own default context (OLLAMA_CONTEXT_LENGTH; 2048 or 4096 tokens unless set) is cut from the front without a word`,
    fix: `set provider: ollama and base_url: ${origin} (hermes then asks for ${cfg.context_tokens} tokens of context)`,
  };
}

/** The warning for a `context_tokens` larger than the server's window, with the fix; `undefined` when it fits. */
export function windowWarning(cfg: EndpointConfig, server: ServerWindow | undefined): string | undefined {
  if (!server || server.contextTokens >= cfg.context_tokens) return undefined;
  return `context_tokens is ${cfg.context_tokens} but ${server.source} says ${cfg.name} at ${cfg.base_url} has ${server.contextTokens}: prompts are budgeted to ${server.contextTokens}; set context_tokens: ${server.contextTokens}, or give the server a larger context`;
}

/**
 * Reads each endpoint's real window and budgets its prompts to the smaller of it and `context_tokens`.
 * Runs in the background at start; a server that is down now is simply not read.
 */
export async function applyServerWindows(endpoints: { cfg: EndpointConfig; client: ModelClient }[], log: Logger): Promise<void> {
  await Promise.all(
    endpoints.map(async ({ cfg, client }) => {
      // Side by side: a server that hangs costs the one deadline, not two.
      const signal = AbortSignal.timeout(5000);
      const [ollama, server] = await Promise.all([ollamaBehindOpenAi(cfg, signal), readServerWindow(cfg, signal)]);
      if (ollama) log.warn({ endpoint: cfg.base_url }, `${ollama.warning}: ${ollama.fix}`);
      const warning = windowWarning(cfg, server);
      if (!warning || !server || !client.window) return;
      (client.window as PromptWindow).contextTokens = server.contextTokens;
      log.warn({ endpoint: cfg.base_url, context_tokens: cfg.context_tokens, server: server.contextTokens }, warning);
    }),
  );
}
