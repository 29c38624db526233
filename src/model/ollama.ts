import type { IncomingMessage } from "node:http";
import type { EndpointConfig } from "../config/schema.js";
import { ModelError } from "../errors.js";
import { newCallId } from "./call-id.js";
import { modelClient, outputTokensOf } from "./client.js";
import { type RequestClock, requestClock } from "./first-byte.js";
import { get, postJson, readText } from "./http.js";
import {
  badAnswer,
  checkedCalls,
  checkedContent,
  firstByteError,
  httpError,
  isObject,
  MAX_REPLY_CHARS,
  networkError,
  parseRetryAfter,
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
  PreparedChat,
  ProbeResult,
  PromptWindow,
  ToolCall,
} from "./types.js";

interface OllamaToolCall {
  id?: string;
  function?: { name?: unknown; arguments?: unknown };
}

interface OllamaChunk {
  message?: { content?: string; tool_calls?: OllamaToolCall[] } | null;
  done?: boolean;
  done_reason?: unknown;
  prompt_eval_count?: unknown;
  eval_count?: unknown;
  error?: unknown;
}

/** Ollama's native /api/chat: the only Ollama API that honours num_ctx. Streams NDJSON. */
export function createOllamaClient(cfg: EndpointConfig): ModelClient {
  const base = cfg.base_url.replace(/\/+$/, "");
  const where = `${base} (Ollama)`;
  const chatUrl = new URL(`${base}/api/chat`);
  const window: PromptWindow = { model: cfg.name, contextTokens: cfg.context_tokens, outputTokens: cfg.max_output_tokens };

  async function chatOnce(body: string, options: ChatOptions): Promise<ModelResult> {
    const clock = requestClock(options.signal, cfg.timeout_s * 1000, cfg.first_byte_timeout_s * 1000);
    try {
      const res = await postJson(chatUrl, body, clock.signal);
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) throw ollamaHttpError(status, await readText(res), header(res, "retry-after"));
      return await readStream(res, options, clock, where);
    } catch (err) {
      if (clock.expired() === "first_byte") throw firstByteError(where, cfg.first_byte_timeout_s);
      if (clock.expired() === "idle") throw stalledError(where, cfg.first_byte_timeout_s);
      throw networkError(err, where, options.signal, () => clock.expired() !== undefined);
    } finally {
      clock.dispose();
    }
  }

  function ollamaHttpError(status: number, body: string, retryAfter: string | null): ModelError {
    // Ollama's own words for a model it lacks (`model "x" not found, try pulling it first`); a path it does
    // not serve (a base_url ending in /v1) is "404 page not found", which is not a missing model.
    if (status === 404 && /model\b.*not found/i.test(body)) {
      return new ModelError("model_missing", `the model '${cfg.name}' is not pulled on ${base}: run \`ollama pull ${cfg.name}\``, {
        status,
      });
    }
    return httpError(status, body, where, parseRetryAfter(retryAfter));
  }

  function prepare(request: ModelRequest): PreparedChat {
    const body = JSON.stringify(toOllamaRequest(cfg, window.contextTokens, request));
    return async (options = {}) => {
      // A retry after text was streamed must not show that text again.
      const text = requestText(options.onText);
      try {
        return await withRetry(() => chatOnce(body, { ...options, onText: text.attempt() }), {
          retries: Math.min(cfg.retries, options.maxRetries ?? cfg.retries),
          baseMs: cfg.retry_base_ms,
          signal: options.signal,
          retryUnreachable: !options.moveOnUnreachable,
        });
      } catch (err) {
        return { ok: false, error: networkError(err, where, options.signal, () => false) };
      }
    };
  }

  return modelClient({
    provider: "ollama",
    baseUrl: base,
    modelName: cfg.name,
    window,
    prepare,
    probe: (signal) => probeOllama(base, cfg.name, signal),
  });
}

function toOllamaRequest(cfg: EndpointConfig, numCtx: number, request: ModelRequest): Record<string, unknown> {
  return {
    model: cfg.name,
    messages: request.messages.map(toOllamaMessage),
    ...(request.tools.length > 0 && {
      tools: request.tools.map((t) => ({ type: "function", function: t })),
    }),
    stream: true,
    keep_alive: cfg.keep_alive,
    options: { num_ctx: numCtx, num_predict: outputTokensOf(cfg, request), temperature: cfg.temperature },
  };
}

function toOllamaMessage(m: ChatMessage): Record<string, unknown> {
  if (m.role === "assistant" && m.toolCalls?.length) {
    return {
      role: "assistant",
      content: m.content,
      tool_calls: m.toolCalls.map((c) => ({ function: { name: c.name, arguments: isObject(c.args) ? c.args : {} } })),
    };
  }
  if (m.role === "tool") return { role: "tool", content: m.content, tool_name: m.toolName };
  if (m.role === "user" && m.images?.length) return { role: "user", content: m.content, images: m.images };
  return { role: m.role, content: m.content };
}

function header(res: IncomingMessage, name: string): string | null {
  const value = res.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/**
 * The most bytes of one answer's stream that are read: each token comes in its own JSON line of ~100 bytes,
 * so a reply of MAX_REPLY_CHARS takes far more than that on the wire.
 */
const MAX_STREAM_BYTES = 40 * MAX_REPLY_CHARS;

/**
 * Reads Ollama's NDJSON stream from the response's own events as it arrives. (Async iteration over
 * the response with a line generator on top cost ~0.3 ms an answer, while the model's slot sat idle.)
 * Reads on after "done" so the keep-alive socket can be reused.
 */
function readStream(res: IncomingMessage, { onText, onAnswered }: ChatOptions, clock: RequestClock, where: string): Promise<ModelResult> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    let text = "";
    const toolCalls: ToolCall[] = [];
    let last: OllamaChunk = {};
    /** The reply's text and call arguments so far: what MAX_REPLY_CHARS bounds (each token comes in a line of ~100 bytes). */
    let replyChars = 0;
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      res.destroy();
      reject(err);
    };
    const take = (line: string) => {
      if (last.done) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new ModelError("bad_response", `the model endpoint sent a line that is not JSON: ${line.slice(0, 120)}`);
      }
      const chunk = ollamaChunk(parsed, line, where);
      if (chunk.error) throw new ModelError("bad_response", `the model reported an error: ${sample(chunk.error)}`);
      const delta = chunk.message?.content ?? "";
      if (delta) {
        text += delta;
        replyChars += delta.length;
        onText?.(delta);
      }
      for (const call of chunk.message?.tool_calls ?? []) {
        // As sent: arguments that are not valid JSON (a string) count too, and are answered as such.
        const raw = call.function?.arguments;
        replyChars += typeof raw === "string" ? raw.length : (JSON.stringify(raw ?? {})?.length ?? 0);
        toolCalls.push(fromOllamaCall(call));
      }
      if (replyChars > MAX_REPLY_CHARS) throw replyTooLong();
      last = chunk;
    };
    const takeLines = (all: boolean) => {
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (line) take(line);
      }
      if (all && buffer.trim()) take(buffer.trim());
    };
    res.setEncoding("utf8");
    let received = 0;
    res.on("data", (chunk: string) => {
      if (failed) return;
      clock.firstByte();
      received += chunk.length;
      // The lines around the reply's text: a server that streams on forever without text is cut off too.
      if (received > MAX_STREAM_BYTES) return fail(replyTooLong());
      buffer += chunk;
      try {
        takeLines(false);
      } catch (err) {
        fail(err as Error);
      }
    });
    res.on("end", () => {
      if (failed) return;
      try {
        takeLines(true);
      } catch (err) {
        return fail(err as Error);
      }
      if (!last.done) return fail(new ModelError("bad_response", "the model stream ended before it was done", { retryable: false }));
      onAnswered?.();
      resolve({
        ok: true,
        text,
        toolCalls,
        usage: {
          promptTokens: reportedTokens(last.prompt_eval_count),
          outputTokens: reportedTokens(last.eval_count),
          firstByteMs: clock.firstByteMs(),
        },
        finishReason: typeof last.done_reason === "string" ? last.done_reason : "stop",
      });
    });
    res.on("error", fail);
    res.on("close", () => {
      if (!res.complete) fail(Object.assign(new Error("the connection closed in the middle of the answer"), { code: "ECONNRESET" }));
    });
  });
}

/** A parsed NDJSON line, checked to have the shape the stream reader relies on (as the OpenAI client checks its chunks). */
function ollamaChunk(value: unknown, line: string, where: string): OllamaChunk {
  if (!isObject(value)) throw badAnswer(where, `a line that is not a JSON object: ${sample(line)}`);
  const message = value.message;
  if (message === undefined || message === null) return value as OllamaChunk;
  if (!isObject(message)) throw badAnswer(where, `a message that is not an object: ${sample(line)}`);
  checkedContent(message.content, where);
  checkedCalls(message.tool_calls as unknown[] | null | undefined, where);
  return value as OllamaChunk;
}

function fromOllamaCall(call: OllamaToolCall): ToolCall {
  const name = typeof call.function?.name === "string" ? call.function.name : "";
  const raw = call.function?.arguments;
  const id = call.id || newCallId();
  if (typeof raw === "string") {
    try {
      return { id, name, args: JSON.parse(raw) };
    } catch (err) {
      return { id, name, args: undefined, parseError: `arguments are not valid JSON (${(err as Error).message})` };
    }
  }
  return { id, name, args: raw ?? {} };
}

async function probeOllama(base: string, name: string, signal?: AbortSignal): Promise<ProbeResult> {
  try {
    const res = await get(`${base}/api/tags`, signal ?? AbortSignal.timeout(5000));
    const text = await readText(res);
    const status = res.statusCode ?? 0;
    if (status === 401 || status === 403)
      return {
        reachable: false,
        detail: `the model endpoint ${base} (Ollama) refused GET /api/tags (HTTP ${status})`,
        fix: "something in front of Ollama wants credentials, which provider ollama does not send: point model.base_url at Ollama itself",
      };
    if (status === 404)
      return {
        reachable: false,
        detail: `the model endpoint ${base} (Ollama) has no ${base}/api/tags (HTTP 404)`,
        fix: "model.base_url for provider ollama is the server's root (e.g. http://127.0.0.1:11434), without /v1 or /api",
      };
    if (status < 200 || status > 299)
      return { reachable: true, detail: `GET /api/tags answered HTTP ${status}`, serverError: serverBusy(status) };
    const body = JSON.parse(text) as { models?: { name?: string; model?: string }[] };
    const names = (body.models ?? []).flatMap((m) => [m.name, m.model]).filter(Boolean) as string[];
    const wanted = name.includes(":") ? name : `${name}:latest`;
    const present = names.includes(name) || names.includes(wanted);
    return {
      reachable: true,
      modelPresent: present,
      detail: present ? `model ${name} is available` : `model ${name} is not pulled: run \`ollama pull ${name}\``,
    };
  } catch (err) {
    const error = networkError(err, `${base} (Ollama)`, signal, () => false);
    return { reachable: false, detail: error.message, fix: error.fix };
  }
}
