import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "../config/schema.js";
import { z } from "../config/zod.js";
import { errorMessage, ToolError } from "../errors.js";
import type { Logger } from "../log.js";
import type { Sdk } from "./sdk.js";
import { openClient } from "./transport.js";
import type { McpSession, McpToolInfo, SessionPhase, SessionStatus } from "./types.js";

export interface SessionDeps {
  sdk: () => Promise<Sdk>;
  log: Logger;
  /** The last tool list (from the store), so the tools exist while the server connects. */
  cached: McpToolInfo[];
  /** Told about every new tool list the server sends. */
  onTools: (tools: McpToolInfo[]) => void;
  /** First reconnect delay; doubles up to a minute. */
  retryBaseMs?: number;
}

const MAX_RETRY_MS = 60_000;

/** Keeps one configured MCP server connected, and reconnects with backoff when it is lost. */
export function createSession(name: string, cfg: McpServerConfig, deps: SessionDeps): McpSession {
  const log = deps.log.child({ mcp: name });
  const transportKind = cfg.command ? "stdio" : "streamable-http";
  const s = {
    phase: "connecting" as SessionPhase,
    closed: false,
    lastError: undefined as string | undefined,
    client: undefined as Client | undefined,
    tools: deps.cached,
    transport: transportKind as SessionStatus["transport"],
    attempt: 0,
    generation: 0,
    timer: undefined as NodeJS.Timeout | undefined,
  };
  let settleFirst: () => void = () => {};
  const first = new Promise<void>((resolve) => {
    settleFirst = resolve;
  });

  /** Ends the attempt under way, if any (see openClient), and the attempt itself, which close() waits for. */
  let abandonAttempt: AbortController | undefined;
  let attempting: Promise<void> = Promise.resolve();

  function connect(): Promise<void> {
    attempting = attemptOnce();
    return attempting;
  }

  async function attemptOnce(): Promise<void> {
    const generation = ++s.generation;
    s.phase = "connecting";
    const attempt = new AbortController();
    abandonAttempt = attempt;
    try {
      const sdk = await deps.sdk();
      const { client, transport } = await openClient(sdk, cfg, log, attempt.signal);
      if (generation !== s.generation || s.closed) return await client.close().catch(() => {});
      // Only now: a failed attempt closes its transport too, and that is the attempt's to report, not a loss.
      client.onclose = () => lost(generation, "the connection closed");
      s.client = client;
      s.transport = transport;
      client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => {
        refresh(client, generation).catch((err) => log.warn({ detail: errorMessage(err) }, "mcp tool list could not be reloaded"));
      });
      await refresh(client, generation);
      s.phase = "connected";
      s.attempt = 0;
      s.lastError = undefined;
      log.info({ transport: s.transport, tools: s.tools.length }, "mcp server connected");
    } catch (err) {
      lost(generation, failureText(err));
    } finally {
      settleFirst();
    }
  }

  async function refresh(client: Client, generation: number): Promise<void> {
    const listed: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const request = { method: "tools/list" as const, ...(cursor && { params: { cursor } }) };
      const result = await client.request(request, TOOL_PAGE, { timeout: cfg.timeout_s * 1000 });
      listed.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    if (generation !== s.generation) return;
    s.tools = listed.flatMap(toToolInfo);
    const left = listed.length - s.tools.length;
    if (left > 0) log.warn({ left }, "mcp tools without a name or whose arguments are not an object are not offered to the model");
    log.info({ tools: s.tools.length }, "mcp tool list loaded");
    deps.onTools(s.tools);
  }

  function lost(generation: number, why: string): void {
    if (generation !== s.generation || s.closed || s.timer) return;
    const client = s.client;
    s.client = undefined;
    if (client) {
      client.onclose = undefined;
      void client.close().catch(() => {});
    }
    s.phase = "down";
    s.lastError = why;
    const base = deps.retryBaseMs ?? 500;
    const delay = Math.min(base * 2 ** s.attempt++, MAX_RETRY_MS) * (0.75 + Math.random() / 2);
    log.warn({ detail: why, retryInMs: Math.round(delay) }, "mcp server not connected; retrying");
    s.timer = setTimeout(() => {
      s.timer = undefined;
      void connect();
    }, delay);
    s.timer.unref();
  }

  async function callOnce(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const client = s.client;
    if (s.phase !== "connected" || !client) {
      throw new ToolError(`server ${name} is not connected (${s.lastError ?? s.phase})`);
    }
    const generation = s.generation;
    try {
      const timeout = cfg.timeout_s * 1000 + 1000;
      return (await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout })) as CallToolResult;
    } catch (err) {
      if (!signal.aborted && !isSessionExpired(err) && isConnectionFailure(err)) lost(generation, errorMessage(err));
      throw isSessionExpired(err) ? err : describeFailure(name, err);
    }
  }

  async function reconnectNow(): Promise<void> {
    clearTimeout(s.timer);
    s.timer = undefined;
    const client = s.client;
    s.client = undefined;
    if (client) {
      client.onclose = undefined;
      await client.close().catch(() => {});
    }
    await connect();
  }

  return {
    name,
    start: () => void connect(),
    firstAttempt: () => first,
    tools: () => s.tools,
    status: () => ({ phase: s.phase, transport: s.transport, lastError: s.lastError, toolCount: s.tools.length }),
    async call(tool, args, signal): Promise<CallToolResult> {
      if (s.phase === "connecting" && s.attempt === 0) await Promise.race([first, aborted(signal)]);
      try {
        return await callOnce(tool, args, signal);
      } catch (err) {
        // A 404 for our session id means the server forgot it (say, it restarted) before running anything:
        // the protocol says to start a new session, and the call can be sent again safely.
        if (signal.aborted || !isSessionExpired(err)) throw err;
        log.info("mcp server forgot the session; starting a new one");
        await reconnectNow();
        return callOnce(tool, args, signal);
      }
    },
    async close() {
      s.closed = true;
      s.phase = "closed";
      clearTimeout(s.timer);
      abandonAttempt?.abort();
      await attempting;
      const client = s.client;
      s.client = undefined;
      if (client) {
        client.onclose = undefined;
        await client.close().catch(() => {});
      }
    },
  };
}

/**
 * A page of tools/list, each tool checked by toToolInfo: the SDK's listTools refuses the whole list for one
 * tool without an inputSchema (or with an output schema its validator cannot compile), and so every tool.
 */
const TOOL_PAGE = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** A listed tool hermes can offer the model, or none: its arguments must be an object of named values. */
function toToolInfo(raw: unknown): McpToolInfo[] {
  const t = raw as { name?: unknown; description?: unknown; inputSchema?: unknown; annotations?: { readOnlyHint?: unknown } };
  if (typeof t?.name !== "string" || !t.name) return [];
  const given = t.inputSchema !== null && typeof t.inputSchema === "object" && !Array.isArray(t.inputSchema);
  const schema = given ? { type: "object", ...(t.inputSchema as Record<string, unknown>) } : { type: "object" };
  if (schema.type !== "object") return [];
  return [
    {
      name: t.name,
      description: typeof t.description === "string" ? t.description : "",
      inputSchema: schema,
      readOnlyHint: t.annotations?.readOnlyHint === true,
    },
  ];
}

function isSessionExpired(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === 404 && (err as Error).name !== "McpError";
}

/** The SDK's code for a connection that closed under a request (ErrorCode.ConnectionClosed). */
const CONNECTION_CLOSED = -32000;

/**
 * Failures of the connection itself (as opposed to a tool's error): worth reconnecting over. A JSON-RPC
 * error is the server's answer, whatever its words ("the garden valve is closed"), unless it is the SDK's
 * own for a closed connection; only the transport's errors are read by their text.
 */
function isConnectionFailure(err: unknown): boolean {
  // The SDK's own close is the code and its words: -32000 is also JSON-RPC's plain "server error", which
  // servers not built on the SDK send for a tool's failure.
  if ((err as Error | undefined)?.name === "McpError")
    return (
      (err as { code?: unknown }).code === CONNECTION_CLOSED &&
      (err as Error).message === `MCP error ${CONNECTION_CLOSED}: Connection closed`
    );
  const text = errorMessage(err);
  return /fetch failed|ECONNREFUSED|ECONNRESET|socket hang up|Not connected|closed/i.test(text);
}

/** The statuses an owner fixes in the config (node:http's table would load node:http for three words). */
const HTTP_REFUSALS: Record<number, string> = { 401: "unauthorized", 403: "forbidden", 404: "not found" };

/** The SDK's error, led by the HTTP status when there is one: "401 unauthorized: Streamable HTTP error: …". */
function failureText(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code !== "number" || code < 400 || code >= 600) return errorMessage(err);
  return `${code}${HTTP_REFUSALS[code] ? ` ${HTTP_REFUSALS[code]}` : ""}: ${errorMessage(err)}`;
}

/** A reply that is not an MCP result arrives as a schema library's JSON dump: say it in words instead. */
function describeFailure(server: string, err: unknown): unknown {
  const issues = (err as { issues?: { path?: unknown[]; message?: string }[] } | undefined)?.issues;
  if (Array.isArray(issues)) {
    const detail = issues.map((i) => `${(i.path ?? []).join(".") || "result"}: ${i.message ?? "invalid"}`).join("; ");
    return new ToolError(`server ${server} sent a reply that is not a valid MCP tool result (${detail})`);
  }
  return err;
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
