/**
 * A fake model server on 127.0.0.1 speaking Ollama's native chat API (NDJSON streaming) and the
 * OpenAI chat completions API (JSON and SSE). Tests script it turn by turn; it records every request.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { SUMMARY_ADDITION, SUMMARY_STOPS } from "../../src/agent/compact-idle.js";
import { COMPACTION_MARKER } from "../../src/agent/compaction.js";
import { createChanges, waitFor } from "../helpers/wait.js";

export interface ScriptedCall {
  name: string;
  /** An object is sent as JSON; a string is sent verbatim (to script malformed arguments). */
  arguments?: unknown;
  /** The call's id as the server sends it (Ollama sends none unless given); a number scripts a server that breaks the type. */
  id?: string | number;
}

export interface Turn {
  text?: string;
  toolCalls?: ScriptedCall[];
  /** Answer with this HTTP status and an error body instead. */
  status?: number;
  /** The error text sent with `status` (default: "scripted <status>"). */
  errorMessage?: string;
  retryAfterS?: number;
  /** Never answer (until the client gives up). */
  hang?: boolean;
  /** Send part of the stream, then destroy the connection. */
  drop?: boolean;
  /** Send the text, then keep the stream open without ever finishing it. */
  hangAfterText?: boolean;
  /** Answer 200 with a body that is not the protocol at all. */
  garbage?: boolean;
  /** Answer 200 with exactly this body, under the protocol's content type (to script a broken answer). */
  raw?: string;
  /** The content type `raw` is sent under instead (e.g. text/html, as from a proxy's login page). */
  contentType?: string;
  /** Answer this many milliseconds after the request arrived. */
  delayMs?: number;
  /** Stream the text in these pieces (default: thirds of `text`), waiting `pieceGapMs` between them. */
  textPieces?: string[];
  pieceGapMs?: number;
  /** Answer only once this settles (e.g. until another request has arrived). */
  gate?: Promise<unknown>;
  /** OpenAI SSE: send every tool call with index 0 (older Ollama servers do). */
  zeroIndex?: boolean;
  /** OpenAI: finish_reason to send (default: tool_calls when there are calls, else stop). */
  finishReason?: string;
  promptTokens?: number;
  outputTokens?: number;
  /** OpenAI: prompt_tokens_details.cached_tokens. */
  cachedTokens?: number;
  /** Report no token counts at all (as some servers do). */
  noUsage?: boolean;
  /**
   * Token fields sent verbatim instead of the usual ones, to script a broken server (e.g. a count that is
   * not a number): Ollama merges them into the final line, OpenAI sends them as `usage`.
   */
  rawUsage?: Record<string, unknown>;
  /** Send the text, then end the response cleanly without the final message (no done / finish_reason). */
  endEarly?: boolean;
}

export interface RecordedRequest {
  api: "ollama" | "openai";
  path: string;
  body: Record<string, unknown>;
  messages: { role: string; content: string; [k: string]: unknown }[];
  tools: { function?: { name: string }; name?: string }[];
  /** performance.now() when the request arrived, and when its answer was fully written. */
  arrivedAt: number;
  answeredAt?: number;
  /** A request hermes made to summarise old turns (answered from the compaction script, else by fakeSummary). */
  compaction?: boolean;
}

export type Responder = (req: RecordedRequest, index: number) => Turn;

export interface FakeModel {
  /** Base URL for provider ollama. */
  url: string;
  /** Base URL for provider openai (…/v1). */
  openaiUrl: string;
  requests: RecordedRequest[];
  models: string[];
  /** Ollama `/api/show` capabilities per model (default: completion and tools, no vision). */
  capabilities: Record<string, string[]>;
  /** Models asked about with `/api/show`, in order. */
  shown: string[];
  /** Queue turns; when the queue is empty the responder (default: reply "ok") answers. */
  script(...turns: Turn[]): void;
  respond(responder: Responder): void;
  /** Queue answers for compaction requests only (they never take turns from `script`). */
  scriptCompaction(...turns: Turn[]): void;
  /** Resolves when at least `n` chat requests have arrived. */
  waitForRequests(n: number): Promise<void>;
  /** Answer Ollama's GET /api/version with this version (unset: 404, as a server that is not Ollama). */
  ollamaVersion?: string;
  /** Ollama /api/show: model_info.<arch>.context_length, when set. */
  contextLength?: number;
  /** llama.cpp /props: default_generation_settings.n_ctx, when set (otherwise /props is 404). */
  nCtx?: number;
  /** /v1/models: max_model_len of each model, when set. */
  maxModelLen?: number;
  /** LM Studio /api/v0/models: loaded_context_length of each model, when set (otherwise 404). */
  loadedContextLength?: number;
  /** OpenAI API: a chat for a model not in `models` gets 404 model_not_found (off by default). */
  strictModels?: boolean;
  /** When set, any request without `Authorization: Bearer <apiKey>` gets 401 (a key-checking endpoint or proxy). */
  apiKey?: string;
  /** Stops listening (connections are refused) until `resume`, on the same port. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

/** `port`: listen there (e.g. where a daemon already expects a model that was down); default any free one. */
/** With `tls`, it serves https (its URLs say so). */
export async function startFakeModel(options: { port?: number; tls?: { key: string; cert: string } } = {}): Promise<FakeModel> {
  const queue: Turn[] = [];
  const compactionQueue: Turn[] = [];
  let responder: Responder = () => ({ text: "ok" });
  const requests: RecordedRequest[] = [];
  const changes = createChanges();
  const sockets = new Set<Socket>();
  const fake: FakeModel = {
    url: "",
    openaiUrl: "",
    requests,
    models: ["hermes3:8b"],
    capabilities: {},
    shown: [],
    script: (...turns) => queue.push(...turns),
    scriptCompaction: (...turns) => compactionQueue.push(...turns),
    respond: (r) => {
      responder = r;
    },
    waitForRequests: async (n) => {
      await waitFor(() => requests.length >= n, { changes, message: () => `${n} requests (${requests.length} came)` });
    },
    pause: async () => {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, "close").catch(() => {});
    },
    resume: async () => {
      server.listen(port, "127.0.0.1");
      await once(server, "listening");
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      if (!server.listening) return;
      server.close();
      await once(server, "close").catch(() => {});
    },
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch(() => res.destroy());
  };
  const server: Server = options.tls ? createTlsServer(options.tls, onRequest) : createServer(onRequest);
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "").split("?")[0] ?? "";
    if (fake.apiKey !== undefined && req.headers.authorization !== `Bearer ${fake.apiKey}`)
      return json(res, 401, { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } });
    if (req.method === "GET" && path === "/api/tags") return json(res, 200, { models: fake.models.map((name) => ({ name, model: name })) });
    if (req.method === "GET" && path === "/v1/models") {
      const data = fake.models.map((id) => ({ id, object: "model", ...(fake.maxModelLen && { max_model_len: fake.maxModelLen }) }));
      return json(res, 200, { object: "list", data });
    }
    if (req.method === "GET" && path === "/api/version" && fake.ollamaVersion) return json(res, 200, { version: fake.ollamaVersion });
    if (req.method === "GET" && path === "/props" && fake.nCtx)
      return json(res, 200, { default_generation_settings: { n_ctx: fake.nCtx }, total_slots: 1 });
    if (req.method === "POST" && path === "/api/show") return show(req, res);
    if (req.method === "GET" && path === "/api/v0/models" && fake.loadedContextLength) {
      const data = fake.models.map((id) => ({
        id,
        type: "llm",
        state: "loaded",
        max_context_length: 131072,
        loaded_context_length: fake.loadedContextLength,
      }));
      return json(res, 200, { object: "list", data });
    }
    const isOllama = path === "/api/chat";
    if (req.method !== "POST" || (!isOllama && path !== "/v1/chat/completions")) return json(res, 404, { error: "not found" });
    const arrivedAt = performance.now();
    res.once("finish", () => {
      recorded.answeredAt = performance.now();
    });
    const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    const recorded: RecordedRequest = {
      arrivedAt,
      api: isOllama ? "ollama" : "openai",
      path,
      body,
      messages: (body.messages ?? []) as RecordedRequest["messages"],
      tools: (body.tools ?? []) as RecordedRequest["tools"],
    };
    requests.push(recorded);
    changes.notify();
    const lastMessage = recorded.messages.at(-1);
    recorded.compaction = [recorded.messages[0], lastMessage?.role === "user" ? lastMessage : undefined].some((m) =>
      String(m?.content ?? "").startsWith(COMPACTION_MARKER),
    );
    const turn = recorded.compaction
      ? (compactionQueue.shift() ?? { text: fakeSummary(recorded) })
      : (queue.shift() ?? responder(recorded, requests.length - 1));
    if (turn.delayMs) await until(arrivedAt + turn.delayMs);
    if (turn.gate) await turn.gate;
    if (turn.hang) return;
    if (isOllama && !fake.models.includes(String(body.model))) return json(res, 404, { error: `model '${body.model}' not found` });
    if (!isOllama && fake.strictModels && !fake.models.includes(String(body.model)))
      return json(res, 404, {
        error: { message: `The model \`${body.model}\` does not exist`, type: "invalid_request_error", code: "model_not_found" },
      });
    if (turn.status) {
      if (turn.retryAfterS !== undefined) res.setHeader("retry-after", String(turn.retryAfterS));
      return json(
        res,
        turn.status,
        isOllama
          ? { error: turn.errorMessage ?? `scripted ${turn.status}` }
          : { error: { message: turn.errorMessage ?? `scripted ${turn.status}`, type: "server_error" } },
      );
    }
    if (turn.garbage) {
      res.writeHead(200, { "content-type": isOllama ? "application/x-ndjson" : "text/event-stream" });
      return void res.end(isOllama ? "<html>502 Bad Gateway</html>\n" : "data: {not json at all\n\n");
    }
    if (turn.raw !== undefined) {
      const type = turn.contentType ?? (isOllama ? "application/x-ndjson" : body.stream ? "text/event-stream" : "application/json");
      res.writeHead(200, { "content-type": type });
      return void res.end(turn.raw);
    }
    if (isOllama) return ollamaStream(res, turn);
    return body.stream ? openaiStream(res, turn) : openaiJson(res, turn);
  }

  /** Ollama's model details: 404 for a model that is not pulled, else its capabilities and context length. */
  async function show(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = JSON.parse(await readBody(req)) as { model?: string; name?: string };
    const name = String(body.model ?? body.name);
    fake.shown.push(name);
    if (!fake.models.includes(name)) return json(res, 404, { error: `model '${name}' not found` });
    const info = fake.contextLength ? { "general.architecture": "llama", "llama.context_length": fake.contextLength } : {};
    json(res, 200, {
      modelfile: "",
      parameters: "",
      details: { family: "llama", families: ["llama"] },
      model_info: info,
      capabilities: fake.capabilities[name] ?? ["completion", "tools"],
    });
  }

  /**
   * Waits until a moment (counted from the request's arrival), to within ~0.1 ms: a timer alone fires up
   * to a millisecond late. The last 2 ms are spent yielding to I/O.
   */
  async function until(at: number): Promise<void> {
    const early = at - performance.now() - 2;
    if (early > 0) await new Promise((r) => setTimeout(r, early));
    while (performance.now() < at) await new Promise((r) => setImmediate(r));
  }

  server.listen(options.port ?? 0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  fake.url = `${options.tls ? "https" : "http"}://127.0.0.1:${port}`;
  fake.openaiUrl = `${fake.url}/v1`;
  return fake;
}

export const FAKE_SUMMARY = "[summary by the fake model]";

/**
 * A recognisable summary: the summary so far, then what each user line said (without the time note),
 * oldest first and at most 1200 characters, so early facts are carried from one summary into the next.
 */
export function fakeSummary(req: RecordedRequest): string {
  if (!String(req.messages[0]?.content).startsWith(COMPACTION_MARKER)) return fakeSummaryInPlace(req);
  const body = String(req.messages[1]?.content ?? "");
  const previous = body.match(/^Summary so far:\n([\s\S]*?)\n\nNew part of the conversation:/)?.[1] ?? "";
  const said = [...body.matchAll(/^User: (.*)$/gm)].map((m) => (m[1] ?? "").replace(/\s*\(Current time:.*$/, ""));
  const kept = previous.startsWith(FAKE_SUMMARY) ? previous.slice(FAKE_SUMMARY.length).trim() : "";
  return `${FAKE_SUMMARY} ${[kept, ...said].filter(Boolean).join("; ")}`.slice(0, 1200);
}

/**
 * The same for a summary asked for at the end of the chat's own prompt: the summary in the system prompt, then
 * each user message, within the words asked for (six characters a word); an addition is only the new part.
 */
function fakeSummaryInPlace(req: RecordedRequest): string {
  const system = String(req.messages[0]?.content ?? "");
  const ask = String(req.messages.at(-1)?.content ?? "");
  const previous = system.match(/Summary of the earlier conversation[^\n]*\n([\s\S]*)$/)?.[1] ?? "";
  // As a model following the request: only the messages before the one it names, when it names one.
  const stop = ask.match(new RegExp(`${SUMMARY_STOPS} ("(?:[^"\\\\]|\\\\.)*")`))?.[1];
  const until = stop === undefined ? undefined : (JSON.parse(stop) as string);
  const users = req.messages.slice(1, -1).filter((m) => m.role === "user");
  const end = until === undefined ? -1 : users.findIndex((m) => String(m.content).startsWith(until));
  const said = (end < 0 ? users : users.slice(0, end)).map((m) => String(m.content).split("\n")[0] ?? "");
  const words = Number(ask.match(/At most (\d+) words/)?.[1] ?? 200);
  const limit = Math.min(1200, words * 6);
  if (ask.includes(SUMMARY_ADDITION)) return said.join("; ").slice(0, limit);
  const kept = previous.startsWith(FAKE_SUMMARY) ? previous.slice(FAKE_SUMMARY.length).trim() : "";
  return `${FAKE_SUMMARY} ${[kept, ...said].filter(Boolean).join("; ")}`.slice(0, limit);
}

/** The whole body of a request, as text. Shared by the fake servers. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      data += c;
    });
    req.on("end", () => resolve(data));
    req.on("error", reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function pieces(text: string): string[] {
  if (text.length < 4) return text ? [text] : [];
  const third = Math.ceil(text.length / 3);
  return [text.slice(0, third), text.slice(third, 2 * third), text.slice(2 * third)];
}

/** Sends the turn's text piece by piece, with its gaps. */
async function eachPiece(turn: Turn, send: (piece: string) => void): Promise<void> {
  for (const [i, p] of (turn.textPieces ?? pieces(turn.text ?? "")).entries()) {
    if (i > 0 && turn.pieceGapMs) await new Promise((r) => setTimeout(r, turn.pieceGapMs));
    send(p);
  }
}

function argsText(call: ScriptedCall): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {});
}

async function ollamaStream(res: ServerResponse, turn: Turn): Promise<void> {
  res.writeHead(200, { "content-type": "application/x-ndjson" });
  const line = (o: unknown) => res.write(`${JSON.stringify(o)}\n`);
  const created_at = new Date().toISOString();
  await eachPiece(turn, (p) => line({ model: "m", created_at, message: { role: "assistant", content: p }, done: false }));
  if (turn.drop) return void res.destroy();
  if (turn.endEarly) return void res.end();
  if (turn.hangAfterText) return;
  if (turn.toolCalls?.length) {
    const tool_calls = turn.toolCalls.map((c) => ({
      ...(c.id !== undefined && { id: c.id }),
      function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : (c.arguments ?? {}) },
    }));
    line({ model: "m", created_at, message: { role: "assistant", content: "", tool_calls }, done: false });
  }
  line({
    model: "m",
    created_at,
    message: { role: "assistant", content: "" },
    done: true,
    done_reason: "stop",
    ...(!turn.noUsage && { prompt_eval_count: turn.promptTokens ?? 100, eval_count: turn.outputTokens ?? 10 }),
    ...turn.rawUsage,
  });
  res.end();
}

async function openaiStream(res: ServerResponse, turn: Turn): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
  const chunk = (delta: unknown, finish: string | null = null) =>
    send({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });
  chunk({ role: "assistant", content: "" });
  await eachPiece(turn, (p) => chunk({ content: p }));
  if (turn.drop) return void res.destroy();
  if (turn.endEarly) return void res.end();
  if (turn.hangAfterText) return;
  (turn.toolCalls ?? []).forEach((c, i) => {
    const index = turn.zeroIndex ? 0 : i;
    const id = c.id ?? `call_${i}_${Math.random().toString(36).slice(2, 8)}`;
    const args = argsText(c);
    const half = Math.ceil(args.length / 2);
    chunk({ tool_calls: [{ index, id, type: "function", function: { name: c.name, arguments: args.slice(0, half) } }] });
    chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] });
  });
  chunk({}, turn.finishReason ?? (turn.toolCalls?.length ? "tool_calls" : "stop"));
  if (!turn.noUsage) send({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m", choices: [], usage: openaiUsage(turn) });
  res.write("data: [DONE]\n\n");
  res.end();
}

function openaiJson(res: ServerResponse, turn: Turn): void {
  const tool_calls = (turn.toolCalls ?? []).map((c, i) => ({
    id: c.id ?? `call_${i}`,
    type: "function",
    function: { name: c.name, arguments: argsText(c) },
  }));
  json(res, 200, {
    id: "c1",
    object: "chat.completion",
    created: 0,
    model: "m",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: turn.text ?? null, ...(tool_calls.length && { tool_calls }) },
        finish_reason: turn.finishReason ?? (tool_calls.length ? "tool_calls" : "stop"),
      },
    ],
    ...(!turn.noUsage && { usage: openaiUsage(turn) }),
  });
}

function openaiUsage(turn: Turn): Record<string, unknown> {
  if (turn.rawUsage) return turn.rawUsage;
  const prompt = turn.promptTokens ?? 100;
  const output = turn.outputTokens ?? 10;
  return {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: prompt + output,
    ...(turn.cachedTokens !== undefined && { prompt_tokens_details: { cached_tokens: turn.cachedTokens } }),
  };
}
