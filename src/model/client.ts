import type { ModelClient } from "./types.js";

/** A client from its parts: `chat` is `prepare` and send in one call. */
export function modelClient(parts: Omit<ModelClient, "chat">): ModelClient {
  return { ...parts, chat: (request, options) => parts.prepare(request)(options) };
}
