import OpenAI from "openai";
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionMessageToolCall } from "openai/resources/chat/completions";
import type { EndpointConfig } from "../config/schema.js";
import { ModelError } from "../errors.js";
import { newCallId } from "./call-id.js";
import { modelClient, outputTokensOf } from "./client.js";
import { type RequestClock, requestClock } from "./first-byte.js";
import {
  badAnswer,
  checkedCalls,
  checkedContent,
  firstByteError,
  httpError,
  isObject,
  MAX_REPLY_CHARS,
  networkError,
  replyTooLong,
  sample,
  serverBusy,
  stalledError,
} from "./http-errors.js";
import { withRetry } from "./retry.js";
import { requestText } from "./stream-text.js";
import { reportedTokens } from "./tokens.js";
import type {
  ChatMessage,
  ChatOptions,
  ModelClient,
  ModelRequest,
  ModelResult,
  ModelUsage,
  ProbeResult,
  PromptWindow,
  ToolCall,
} from "./types.js";

interface PartialCall {
  id: string;
  index: number;
  name: string;
  args: string;
}

/** Any OpenAI-compatible /v1 endpoint (vLLM, llama.cpp, LM Studio, OpenRouter, OpenAI) through the openai SDK. */
export function createOpenAIClient(cfg: EndpointConfig, options: { stream?: boolean } = {}): ModelClient {
  const base = cfg.base_url.replace(/\/+$/, "");
  const where = `${base} (OpenAI-compatible)`;
  const stream = options.stream ?? true;
  // logLevel off: every failure comes back in the result and hermes logs it; the SDK's own lines would go to stderr raw.
  const sdk = new OpenAI({ baseURL: base, apiKey: cfg.api_key || "none", maxRetries: 0, timeout: cfg.timeout_s * 1000, logLevel: "off" });
  const window: PromptWindow = { model: cfg.name, contextTokens: cfg.context_tokens, outputTokens: cfg.max_output_tokens };

  async function chatOnce(request: ModelRequest, opts: ChatOptions): Promise<ModelResult> {
    const body = {
      model: cfg.name,
      messages: request.messages.map(toOpenAIMessage),
      ...(request.tools.length > 0 && { tools: request.tools.map((t) => ({ type: "function" as const, function: t })) }),
      max_tokens: outputTokensOf(cfg, request),
      temperature: cfg.temperature,
    };
    // An answer that is not streamed comes whole, when it is done: its first byte is its last, so only
    // timeout_s bounds it (first_byte_timeout_s would cut off every answer that takes longer to write).
    const firstByteMs = stream ? cfg.first_byte_timeout_s * 1000 : cfg.timeout_s * 1000;
    const clock = requestClock(opts.signal, cfg.timeout_s * 1000, firstByteMs);
    try {
      if (!stream) {
        const completion = await sdk.chat.completions.create({ ...body, stream: false }, { signal: clock.signal });
        clock.firstByte();
        return fromCompletion(completion, opts.onText, clock, where);
      }
      const { data: chunks, response } = await sdk.chat.completions
        .create({ ...body, stream: true, stream_options: { include_usage: true } }, { signal: clock.signal })
        .withResponse();
      // A server that names no content type is read as an event stream, as before.
      const type = mediaType(response);
      if (type && type !== "text/event-stream") return fromOtherBody(await response.text(), type, opts.onText, clock, where, cfg.api_key);
      return await readChunks(chunks, opts.onText, clock, where);
    } catch (err) {
      if (clock.expired() === "first_byte") throw firstByteError(where, cfg.first_byte_timeout_s);
      if (clock.expired() === "idle") throw stalledError(where, cfg.first_byte_timeout_s);
      if (clock.expired() === "total") throw new ModelError("timeout", `the model endpoint ${where} did not answer in time`);
      throw sdkError(err, where, opts.signal);
    } finally {
      clock.dispose();
    }
  }

  // The SDK serialises the request itself, when it sends it.
  const prepare =
    (request: ModelRequest) =>
    async (opts: ChatOptions = {}) => {
      // A retry after text was streamed must not show that text again.
      const text = requestText(opts.onText);
      try {
        return await withRetry(() => chatOnce(request, { ...opts, onText: text.attempt() }), {
          retries: Math.min(cfg.retries, opts.maxRetries ?? cfg.retries),
          baseMs: cfg.retry_base_ms,
          signal: opts.signal,
          retryUnreachable: !opts.moveOnUnreachable,
        });
      } catch (err) {
        return { ok: false as const, error: sdkError(err, where, opts.signal) };
      }
    };
  return modelClient({
    provider: "openai",
    baseUrl: base,
    modelName: cfg.name,
    window,
    prepare,
    probe: (signal) => probeOpenAI(sdk, cfg.name, base, where, signal),
  });
}

function sdkError(err: unknown, where: string, signal: AbortSignal | undefined): ModelError {
  if (err instanceof ModelError) return err;
  if (err instanceof OpenAI.APIConnectionTimeoutError)
    return new ModelError("timeout", `the model endpoint ${where} did not answer in time`);
  if (err instanceof OpenAI.APIUserAbortError) return new ModelError("aborted", "the request was cancelled");
  if (err instanceof OpenAI.APIError && typeof err.status === "number") {
    const retryAfter = Number(err.headers?.get?.("retry-after"));
    const body = JSON.stringify(err.error ?? { error: err.message });
    if (err.status === 404 && /model/i.test(body))
      return new ModelError("model_missing", httpError(404, body, where).message, { status: 404 });
    return httpError(err.status, body, where, Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined);
  }
  if (err instanceof OpenAI.APIConnectionError) {
    const error = networkError(err.cause ?? err, where, signal, () => false);
    // The connection failed, whatever its cause says.
    if (error.kind !== "bad_response") return error;
    return new ModelError("unreachable", `the model endpoint ${where} failed: ${err.message}`);
  }
  // An error event in the stream (`event: error`, or a chunk with an `error`): the endpoint's own words.
  if (err instanceof OpenAI.APIError) return new ModelError("bad_response", `the model reported an error: ${err.message}`);
  return networkError(err, where, signal, () => false);
}

/** The type of base64 image data, from its first bytes (the `data:` URL needs it). */
function imageMime(base64: string): string {
  if (base64.startsWith("iVBOR")) return "image/png";
  if (base64.startsWith("R0lG")) return "image/gif";
  if (base64.startsWith("UklGR")) return "image/webp";
  return "image/jpeg";
}

function toOpenAIMessage(m: ChatMessage): ChatCompletionMessageParam {
  if (m.role === "assistant" && m.toolCalls?.length) {
    return {
      role: "assistant",
      content: m.content || null,
      tool_calls: m.toolCalls.map((c) => ({
        id: c.id,
        type: "function" as const,
        function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
      })),
    };
  }
  if (m.role === "tool") return { role: "tool", content: m.content, tool_call_id: m.toolCallId };
  if (m.role === "user" && m.images?.length) {
    const images = m.images.map((data) => ({ type: "image_url" as const, image_url: { url: `data:${imageMime(data)};base64,${data}` } }));
    return { role: "user", content: [{ type: "text", text: m.content }, ...images] };
  }
  return { role: m.role, content: m.content };
}

/**
 * Accumulates streamed tool calls by id. Older Ollama servers send every parallel call with index 0,
 * so an id we have not seen starts a new call even when its index is taken; a fragment without an id
 * continues the call with its index, and an index not seen yet starts a call (servers that send no ids
 * number their parallel calls); a fragment with neither continues the latest call.
 */
export function accumulateToolCall(calls: PartialCall[], delta: NonNullable<ChatCompletionChunk.Choice.Delta["tool_calls"]>[number]): void {
  const byId = delta.id ? calls.find((c) => c.id === delta.id) : undefined;
  let target = byId;
  if (!target && !delta.id) target = delta.index === undefined ? calls.at(-1) : calls.findLast((c) => c.index === delta.index);
  if (!target) {
    target = { id: delta.id || newCallId(), index: delta.index, name: "", args: "" };
    calls.push(target);
  }
  if (delta.function?.name) target.name += delta.function.name;
  if (delta.function?.arguments) target.args += delta.function.arguments;
}

function mediaType(response: Response): string {
  return response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
}

/**
 * A 200 to a streamed request that is not an event stream. A server that ignores `stream: true` sends
 * its completion as JSON: that is the answer. Anything else (a proxy's or a login page's HTML) is not
 * from a model: the error shows a sample of it, so the owner looks at base_url, not at the network.
 */
function fromOtherBody(
  body: string,
  type: string,
  onText: ((delta: string) => void) | undefined,
  clock: RequestClock,
  where: string,
  apiKey: string,
): ModelResult {
  clock.firstByte();
  const completion = /\bjson\b/.test(type) ? parsedOrUndefined(body) : undefined;
  if (isObject(completion) && Array.isArray(completion.choices))
    return fromCompletion(completion as unknown as OpenAI.Chat.Completions.ChatCompletion, onText, clock, where);
  throw notAnEventStream(where, `${type}: ${sample(apiKey ? body.replaceAll(apiKey, "********") : body)}`);
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function notAnEventStream(where: string, what: string): ModelError {
  return new ModelError("bad_response", `the model endpoint ${where} did not send an event stream (${what})`, {
    retryable: false,
    fix: "check model.base_url (a fallback's own base_url): it should reach the model server's OpenAI-compatible API, not a proxy's page",
  });
}

async function readChunks(
  chunks: AsyncIterable<ChatCompletionChunk>,
  onText: ((delta: string) => void) | undefined,
  clock: RequestClock,
  where: string,
): Promise<ModelResult> {
  let text = "";
  let finishReason = "";
  let usage: ChatCompletionChunk["usage"];
  const partial: PartialCall[] = [];
  let received = 0;
  let events = 0;
  for await (const chunk of chunks) {
    clock.firstByte();
    events++;
    if (!isObject(chunk)) throw badAnswer(where, `a chunk that is not a JSON object: ${sample(chunk)}`);
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = checkedContent(choice.delta?.content, where);
    const deltaCalls = checkedCalls(choice.delta?.tool_calls, where);
    received +=
      delta.length + deltaCalls.reduce((n, c) => n + (typeof c.function?.arguments === "string" ? c.function.arguments.length : 0), 0);
    if (received > MAX_REPLY_CHARS) throw replyTooLong();
    if (delta) {
      text += delta;
      onText?.(delta);
    }
    for (const call of deltaCalls) accumulateToolCall(partial, call);
    if (choice.finish_reason) finishReason = String(choice.finish_reason);
  }
  if (events === 0) throw notAnEventStream(where, "text/event-stream without a single event");
  if (!finishReason) throw new ModelError("bad_response", "the model stream ended before it was done");
  return {
    ok: true,
    text,
    toolCalls: partial.map((c) => parseCall(c.id, c.name, c.args)),
    usage: usageOf(usage, clock),
    finishReason,
  };
}

function usageOf(usage: OpenAI.CompletionUsage | null | undefined, clock: RequestClock): ModelUsage {
  return {
    promptTokens: reportedTokens(usage?.prompt_tokens),
    outputTokens: reportedTokens(usage?.completion_tokens),
    cachedTokens: reportedTokens(usage?.prompt_tokens_details?.cached_tokens),
    firstByteMs: clock.firstByteMs(),
  };
}

function fromCompletion(
  completion: OpenAI.Chat.Completions.ChatCompletion,
  onText: ((delta: string) => void) | undefined,
  clock: RequestClock,
  where: string,
): ModelResult {
  if (!isObject(completion)) throw badAnswer(where, `an answer that is not a JSON object: ${sample(completion)}`);
  const choice = completion.choices?.[0];
  if (!choice) throw new ModelError("bad_response", "the model endpoint answered without any choice");
  const text = checkedContent(choice.message?.content, where);
  if (text) onText?.(text);
  const calls = checkedCalls(choice.message?.tool_calls, where).filter(
    (c): c is ChatCompletionMessageToolCall & { type: "function" } => c.type === "function",
  );
  return {
    ok: true,
    text,
    toolCalls: calls.map((c) => parseCall(c.id || newCallId(), c.function.name, c.function.arguments)),
    usage: usageOf(completion.usage, clock),
    finishReason: choice.finish_reason ?? "stop",
  };
}

function parseCall(id: string, name: string, raw: string): ToolCall {
  if (!raw.trim()) return { id, name, args: {} };
  try {
    return { id, name, args: JSON.parse(raw) };
  } catch (err) {
    return { id, name, args: undefined, parseError: `arguments are not valid JSON (${(err as Error).message})` };
  }
}

async function probeOpenAI(sdk: OpenAI, name: string, base: string, where: string, signal?: AbortSignal): Promise<ProbeResult> {
  try {
    const page = await sdk.models.list({ signal: signal ?? AbortSignal.timeout(5000) });
    const ids = page.data.map((m) => m.id);
    const present = ids.includes(name);
    return {
      reachable: true,
      modelPresent: present,
      detail: present ? `model ${name} is available` : `model ${name} is not offered by ${where}`,
    };
  } catch (err) {
    const refused = refusedListing(err, base, where);
    if (refused) return refused;
    const error = sdkError(err, where, signal);
    if (error.kind === "http")
      return {
        reachable: true,
        detail: `cannot list models: ${error.message}`,
        serverError: error.status !== undefined && serverBusy(error.status),
      };
    return { reachable: false, detail: error.message, fix: error.fix };
  }
}

/**
 * A model listing that says the endpoint will not serve us: a refused key (401/403), or a 404 from a
 * base_url that lacks /v1 (so every call goes to a path the server does not have). Both are down, not
 * "reachable": chats would fail the same way. A 404 under a base that ends in /v1 is a server that does
 * not list its models, which says nothing about the model.
 */
function refusedListing(err: unknown, base: string, where: string): ProbeResult | undefined {
  if (!(err instanceof OpenAI.APIError)) return undefined;
  const answered = `HTTP ${err.message.slice(0, 200)}`;
  if (err.status === 401 || err.status === 403) {
    return {
      reachable: false,
      detail: `the model endpoint ${where} refused the API key (${answered})`,
      fix: "check model.api_key (a fallback's own api_key) and the environment variable it names, e.g. OPENAI_API_KEY in hermes.env",
    };
  }
  if (err.status === 404 && !/\/v1$/.test(new URL(base).pathname))
    return {
      reachable: false,
      detail: `the model endpoint ${where} has no model list at ${base}/models (${answered})`,
      fix: `the base_url of an OpenAI-compatible endpoint usually ends in /v1 (e.g. ${base}/v1)`,
    };
  return undefined;
}
