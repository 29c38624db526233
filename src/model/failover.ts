import type { Logger } from "pino";
import { ModelError } from "../errors.js";
import { serverBusy } from "./http-errors.js";
import { type RequestText, requestText } from "./stream-text.js";
import { latinLengthOf } from "./tokens.js";
import type { ChatOptions, ModelChain, ModelClient, ModelRequest, ModelResult, PreparedChat, ProbeResult, PromptWindow } from "./types.js";

export interface ChainEndpoint {
  client: ModelClient;
  /** Prompt + output tokens this endpoint may use per day; 0 = no limit. */
  dailyTokens: number;
}

export interface ChainOptions {
  retryPrimaryAfterMs: number;
  /** Tokens an endpoint (by base URL) used so far today, from the ledger; asked once a day per limited endpoint. */
  /** Tokens the endpoint's model used today before this process (the ledger), by its base URL and model. */
  usedToday: (endpoint: string, model: string) => number;
  log: Logger;
  /** Today as a day key; local calendar days by default. */
  today?: () => string;
}

/**
 * Failures that another endpoint can fix: down, silent, overloaded, broken off, or without the model.
 * Not a 400: any endpoint would refuse the same request.
 */
export function movesOn(error: ModelError): boolean {
  if (error.kind === "http") return error.status === undefined || serverBusy(error.status);
  return error.kind === "unreachable" || error.kind === "timeout" || error.kind === "model_missing" || error.kind === "bad_response";
}

/** Why an endpoint was left, in a few words for the chat and `hermes status`. */
export function whyLeft(client: ModelClient, error: ModelError): string {
  const at = `the model at ${hostOf(client.baseUrl)}`;
  switch (error.kind) {
    case "unreachable":
      return `${at} is unreachable`;
    case "timeout":
      return `${at} did not answer in time`;
    case "model_missing":
      return `${client.modelName} is not available at ${hostOf(client.baseUrl)}`;
    case "bad_response":
      return `${at} broke off its answer`;
    case "budget":
      return `${at} is past its daily_tokens`;
    default:
      return `${at} answered HTTP ${error.status ?? "error"}`;
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

const localDay = () => {
  const d = new Date();
  return `${d.getFullYear()}-${d.getMonth() + 1}-${d.getDate()}`;
};

export function createModelChain(endpoints: ChainEndpoint[], options: ChainOptions): ModelChain {
  const today = options.today ?? localDay;
  let active = 0;
  let reason = "";
  let probeTimer: NodeJS.Timeout | undefined;
  const spent = endpoints.map(() => ({ day: "", tokens: 0, told: false }));

  const overBudget = (i: number): boolean => {
    const limit = (endpoints[i] as ChainEndpoint).dailyTokens;
    if (limit <= 0) return false;
    const s = spent[i] as (typeof spent)[number];
    if (s.day !== today())
      Object.assign(s, { day: today(), tokens: options.usedToday(clientOf(i).baseUrl, clientOf(i).modelName), told: false });
    return s.tokens >= limit;
  };
  const clientOf = (i: number) => (endpoints[i] as ChainEndpoint).client;

  const count = (i: number, result: ModelResult, request: ModelRequest) => {
    const s = spent[i] as (typeof spent)[number];
    if ((endpoints[i] as ChainEndpoint).dailyTokens <= 0 || !result.ok) return;
    // Estimated where the endpoint reports none, as the ledger does (which the next start reads back).
    const output = result.usage.outputTokens ?? Math.ceil(outputChars(result.text, result.toolCalls) / 3.6);
    s.tokens += (result.usage.promptTokens ?? request.estimatedTokens ?? 0) + output;
  };

  const moveTo = (i: number, why: string) => {
    if (i === active) return;
    options.log.warn({ from: clientOf(active).baseUrl, to: clientOf(i).baseUrl, reason: why }, "model calls moved to another endpoint");
    active = i;
    reason = i === 0 ? "" : why;
    if (i !== 0) watchPrimary();
    else stopWatching();
  };

  const stopWatching = () => {
    clearInterval(probeTimer);
    probeTimer = undefined;
  };

  const watchPrimary = () => {
    if (probeTimer) return;
    probeTimer = setInterval(() => void probePrimary(), options.retryPrimaryAfterMs);
    probeTimer.unref();
  };

  const probePrimary = async () => {
    const probe = await clientOf(0).probe(AbortSignal.timeout(5000));
    if (!probe.reachable || probe.serverError || probe.modelPresent === false || active === 0 || overBudget(0)) return;
    options.log.info({ endpoint: clientOf(0).baseUrl }, "the primary model endpoint is healthy again; calls go back to it");
    active = 0;
    reason = "";
    stopWatching();
  };

  /** One endpoint's attempt, with one smaller rebuild when the prompt did not fit. */
  const attempt = async (i: number, request: ModelRequest, send: PreparedChat, opts: ChatOptions, text: RequestText) => {
    let result = await timed(i, request, send, opts, text);
    if (!result.ok && result.error.kind === "context_exceeded" && request.rebuild) {
      const smaller = request.rebuild(shrink(windowOf(clientOf(i)), request));
      options.log.warn({ endpoint: clientOf(i).baseUrl }, "the prompt did not fit the model's context; sending a smaller one");
      result = await timed(i, smaller, clientOf(i).prepare(smaller), opts, text);
    }
    return result;
  };

  /** One request to endpoint i; its text streams on only where it goes beyond what earlier tries showed. */
  const timed = async (i: number, request: ModelRequest, send: PreparedChat, opts: ChatOptions, text: RequestText) => {
    const started = performance.now();
    const result = await send({ ...opts, onText: text.attempt() });
    count(i, result, request);
    opts.onCall?.({
      endpoint: clientOf(i).baseUrl,
      model: clientOf(i).modelName,
      usage: result.ok ? result.usage : {},
      estimatedPromptTokens: request.estimatedTokens,
      outputChars: result.ok && result.usage.outputTokens === undefined ? outputChars(result.text, result.toolCalls) : 0,
      totalMs: Math.round(performance.now() - started),
      outcome: result.ok ? "ok" : result.error.kind,
    });
    return result;
  };

  const skip = (i: number, opts: ChatOptions) => {
    const s = spent[i] as (typeof spent)[number];
    if (s.told) return;
    s.told = true;
    opts.onNotice?.(
      `${clientOf(i).modelName} at ${hostOf(clientOf(i).baseUrl)} reached its daily_tokens for today; it is skipped until tomorrow`,
    );
  };

  const prepare = (request: ModelRequest): PreparedChat => {
    const first = active;
    const firstSend = clientOf(first).prepare(request);
    return async (opts: ChatOptions = {}) => {
      let failure: { error: ModelError; from: number } | undefined;
      const text = requestText(opts.onText);
      // An endpoint that is not the last to try does not retry a refused connection: the next one may answer now.
      const moveOn = { ...opts, moveOnUnreachable: true };
      const order = orderFrom(active, endpoints.length);
      for (const i of order) {
        if (overBudget(i)) {
          skip(i, opts);
          failure ??= { error: budgetError(), from: i };
          continue;
        }
        const req = i === first ? request : rebuildFor(request, windowOf(clientOf(i)));
        const send = i === first ? firstSend : clientOf(i).prepare(req);
        const result = await attempt(i, req, send, i === order.at(-1) ? opts : moveOn, text);
        if (result.ok) {
          if (failure && i !== active) {
            const why = whyLeft(clientOf(failure.from), failure.error);
            // An endpoint past its budget was announced when it was skipped.
            if (failure.error.kind !== "budget") opts.onNotice?.(`answered by ${clientOf(i).modelName}: ${why}`);
            moveTo(i, why);
          }
          return result;
        }
        if (!movesOn(result.error) || opts.signal?.aborted || endpoints.length === 1) return result;
        failure ??= { error: result.error, from: i };
      }
      return { ok: false, error: failure?.error ?? budgetError() };
    };
  };

  /**
   * The serving endpoint's probe; when it is not ready, the first other one that is: "down" means every
   * endpoint is. All are asked at once, under the one deadline: asked in turn, a primary that hangs used
   * all of it, and a fallback that would have answered was reported down too.
   */
  const probe = async (signal?: AbortSignal): Promise<ProbeResult> => {
    const order = orderFrom(active, endpoints.length);
    // Taken in order as each comes: a ready serving endpoint is the answer at once, not after the slowest fallback.
    const done = new AbortController();
    // Without a signal of the caller's, the deadline a client gives itself (5 s): done aborts only after the wait.
    const each = AbortSignal.any([signal ?? AbortSignal.timeout(5000), done.signal]);
    const pending = order.map((i) => clientOf(i).probe(each));
    for (const p of pending) p.catch(() => {}); // one not awaited (an earlier one was ready) must not go unhandled
    try {
      for (const [k, i] of order.entries()) {
        const result = await (pending[k] as Promise<ProbeResult>);
        if (result.reachable && result.modelPresent !== false)
          return i === active
            ? result
            : { ...result, detail: `${result.detail} at ${clientOf(i).baseUrl}, a fallback (the serving endpoint is not ready)` };
      }
      return (await pending[0]) as ProbeResult; // none is ready: the serving endpoint's answer says why
    } finally {
      done.abort(); // the probes still under way are not needed
    }
  };

  const chain: ModelChain = {
    get provider() {
      return clientOf(active).provider;
    },
    get baseUrl() {
      return clientOf(active).baseUrl;
    },
    get modelName() {
      return clientOf(active).modelName;
    },
    get window() {
      return clientOf(active).window;
    },
    prepare,
    chat: (request, opts) => prepare(request)(opts),
    probe,
    serving: () => ({
      endpoint: clientOf(active).baseUrl,
      model: clientOf(active).modelName,
      primary: active === 0,
      reason,
      context_tokens: clientOf(active).window?.contextTokens,
    }),
    stop: stopWatching,
  };
  return chain;
}

/** The active endpoint first, then the ones after it, then the ones before it. */
function orderFrom(active: number, n: number): number[] {
  const order: number[] = [];
  for (let k = 0; k < n; k++) order.push((active + k) % n);
  return order;
}

function windowOf(client: ModelClient): PromptWindow {
  return client.window ?? { model: client.modelName, contextTokens: 16384, outputTokens: 1024 };
}

function rebuildFor(request: ModelRequest, window: PromptWindow): ModelRequest {
  return request.rebuild ? request.rebuild(window) : request;
}

/** A window about a third smaller than what the rejected prompt was estimated at. */
function shrink(window: PromptWindow, rejected: ModelRequest): PromptWindow {
  const prompt = Math.min(rejected.estimatedTokens ?? window.contextTokens, window.contextTokens - window.outputTokens);
  return { ...window, contextTokens: Math.max(512, Math.floor(prompt * 0.66) + window.outputTokens) };
}

/** The answer's length as Latin text of the same estimate (see latinLength): a Chinese answer counts its tokens. */
function outputChars(text: string, calls: unknown[]): number {
  return latinLengthOf(text) + (calls.length ? latinLengthOf(JSON.stringify(calls)) : 0);
}

function budgetError(): ModelError {
  return new ModelError("budget", "every model endpoint has used its daily_tokens for today");
}
