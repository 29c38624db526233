import type { EndpointConfig } from "../config/schema.js";
import type { ModelClient, ModelRequest } from "./types.js";

/** A client from its parts: `chat` is `prepare` and send in one call. */
export function modelClient(parts: Omit<ModelClient, "chat">): ModelClient {
  return { ...parts, chat: (request, options) => parts.prepare(request)(options) };
}

/** The answer's token limit: the endpoint's, or the request's own when that is lower. */
export function outputTokensOf(cfg: EndpointConfig, request: ModelRequest): number {
  return Math.min(cfg.max_output_tokens, request.maxOutputTokens ?? cfg.max_output_tokens);
}
