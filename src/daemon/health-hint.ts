import type { ChatOptions, ModelClient, ModelRequest, PreparedChat } from "../model/types.js";
import type { ModelMonitor } from "./health.js";

/**
 * Lets the health probe shorten the wait for a reply: when the endpoint was seen down within the last
 * probe interval, a chat makes one quick try instead of the whole retry schedule (the user hears at once
 * that the model is unreachable); when it was healthy, failures are retried as configured (Ollama may be
 * restarting). Every outcome is reported back, so the monitor learns of an outage or a recovery at once.
 */
function withHealthHint(client: ModelClient, monitor: ModelMonitor): ModelClient {
  const prepare = (request: Parameters<ModelClient["prepare"]>[0]): PreparedChat => {
    const send = client.prepare(request);
    return async (options = {}) => {
      const result = await send(monitor.seenDown() ? { ...options, maxRetries: 0 } : options);
      monitor.observe(result);
      return result;
    };
  };
  // Delegates instead of copying: a chain's endpoint, model name and window are getters that change when
  // it fails over, and a copy would keep budgeting prompts for the endpoint it started with.
  return Object.create(client, {
    prepare: { value: prepare },
    chat: { value: (request: ModelRequest, options?: ChatOptions) => prepare(request)(options) },
  }) as ModelClient;
}

/** The hinted form of whichever client is current, made once per client (the config may be reloaded). */
export function hintedModel(current: () => ModelClient, monitor: ModelMonitor): () => ModelClient {
  let base: ModelClient | undefined;
  let hinted: ModelClient | undefined;
  return () => {
    const now = current();
    if (now !== base || !hinted) {
      base = now;
      hinted = withHealthHint(now, monitor);
    }
    return hinted;
  };
}
