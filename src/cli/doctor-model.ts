import type { Config, EndpointConfig } from "../config/schema.js";
import { ollamaBehindOpenAi, readServerWindow, windowWarning } from "../model/context-window.js";
import { createModelClient } from "../model/create.js";
import type { Check } from "./doctor-check.js";

/** Each fallback: reachable and offering its model. A fallback that is down only warns: the primary may serve. */
export async function checkFallbacks(config: Config): Promise<Check[]> {
  return Promise.all(
    config.model.fallbacks.map(async (f, i): Promise<Check> => {
      const probe = await (await createModelClient(f)).probe(AbortSignal.timeout(5000));
      const name = `fallback ${i + 1}`;
      if (probe.reachable && probe.modelPresent !== false)
        return { name, outcome: "ok", detail: `${f.provider} at ${f.base_url}: ${probe.detail}` };
      return { name, outcome: "warn", detail: probe.detail, fix: `start it, or fix model.fallbacks[${i}]` };
    }),
  );
}

/** The server's real context window against each endpoint's context_tokens. */
export async function checkWindows(config: Config): Promise<Check[]> {
  const endpoints: EndpointConfig[] = [config.model, ...config.model.fallbacks];
  return Promise.all(
    endpoints.map(async (e, i): Promise<Check> => {
      const name = i === 0 ? "context" : `context ${i}`;
      const signal = AbortSignal.timeout(5000);
      const [ollama, server] = await Promise.all([ollamaBehindOpenAi(e, signal), readServerWindow(e, signal)]);
      if (ollama) return { name, outcome: "warn", detail: ollama.warning, fix: ollama.fix };
      if (!server)
        return {
          name,
          outcome: "skip",
          detail: `${e.base_url} did not say its context window (down, or it does not tell); using context_tokens ${e.context_tokens}`,
        };
      const warning = windowWarning(e, server);
      const key = i === 0 ? "model.context_tokens" : `model.fallbacks[${i - 1}].context_tokens`;
      if (!warning) return { name, outcome: "ok", detail: `${server.source}: ${server.contextTokens}; ${key} ${e.context_tokens} fits` };
      return {
        name,
        outcome: "warn",
        detail: warning,
        fix: `set ${key}: ${server.contextTokens}, or start the server with a context of at least ${e.context_tokens}`,
      };
    }),
  );
}
