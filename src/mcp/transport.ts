import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerConfig } from "../config/schema.js";
import { errorMessage } from "../errors.js";
import type { Logger } from "../log.js";
import { VERSION } from "../version.js";
import { loadHttpTransports, type Sdk } from "./sdk.js";
import { boundedLines } from "./stderr-lines.js";
import type { SessionStatus } from "./types.js";

const CONNECT_TIMEOUT_MS = 10_000;
const MAX_STDERR_LINE = 500;
/** A chatty or hostile server cannot fill the journal: the rest of a minute's lines are counted, not logged. */
const MAX_STDERR_LINES_PER_MINUTE = 100;
/** Protocol errors of one connection logged as warnings; the rest at debug, so a babbling server cannot flood the log. */
const WARNED_ERRORS = 5;
/** What one HTTP response, or one event of an SSE stream, may carry: the stdio transport's limit too. */
const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

export interface Opened {
  client: Client;
  transport: SessionStatus["transport"];
}

/**
 * Starts (stdio) or reaches (HTTP) a server and completes the MCP handshake. Streamable HTTP comes first;
 * a server that refuses it with a 4xx (other than 401) gets the older HTTP+SSE transport. The SDK's stdio
 * transport closes a connection whose unread output passes 10 MB (a runaway line), so a restart follows;
 * over HTTP a response (or an SSE event) past the same size is cut off and that call fails. `signal` ends
 * an attempt still under way (the daemon stopping while a server has not answered): its transport is closed,
 * a stdio server's process with it, which would otherwise outlive the daemon when it ignores its input closing.
 */
export async function openClient(sdk: Sdk, cfg: McpServerConfig, log: Logger, signal?: AbortSignal): Promise<Opened> {
  if (cfg.command) return { client: await handshake(sdk, stdioTransport(sdk, cfg, log), cfg, log, signal), transport: "stdio" };
  const url = new URL(cfg.url as string);
  const requestInit = { headers: cfg.headers };
  const fetch = cappedFetch();
  const http = await loadHttpTransports();
  try {
    return {
      client: await handshake(sdk, new http.StreamableHTTPClientTransport(url, { requestInit, fetch }), cfg, log, signal),
      transport: "streamable-http",
    };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (!(err instanceof http.StreamableHTTPError) || typeof code !== "number" || code < 400 || code >= 500 || code === 401) throw err;
    log.info({ code }, "mcp server refused Streamable HTTP; trying HTTP+SSE");
    const sse = new http.SSEClientTransport(url, { requestInit, fetch, eventSourceInit: { fetch: cappedFetch(cfg.headers) } });
    return { client: await handshake(sdk, sse, cfg, log, signal), transport: "sse" };
  }
}

async function handshake(sdk: Sdk, transport: Transport, cfg: McpServerConfig, log: Logger, signal?: AbortSignal): Promise<Client> {
  const client = new sdk.Client({ name: "hermes", version: VERSION }, { capabilities: {} });
  let closing: Promise<void> | undefined;
  const abandon = () => {
    closing = client.close().catch(() => {});
  };
  if (signal?.aborted) {
    await transport.close().catch(() => {});
    throw new Error("closed before it connected");
  }
  signal?.addEventListener("abort", abandon, { once: true });
  let errors = 0;
  client.onerror = (err) => {
    const level = ++errors <= WARNED_ERRORS ? "warn" : "debug";
    log[level]({ detail: errorMessage(err).slice(0, 300) }, "mcp protocol error");
  };
  try {
    await client.connect(transport, { timeout: Math.min(CONNECT_TIMEOUT_MS, cfg.timeout_s * 1000) });
  } catch (err) {
    // Abandoned: the close that ended it, which waits for a stdio server's process to go.
    await (closing ?? client.close().catch(() => {}));
    throw err;
  } finally {
    signal?.removeEventListener("abort", abandon);
  }
  return client;
}

/** The child gets a minimal environment (HOME, PATH, …) plus the server's `env`: never the daemon's tokens. */
function stdioTransport(sdk: Sdk, cfg: McpServerConfig, log: Logger): Transport {
  const transport = new sdk.StdioClientTransport({
    command: cfg.command as string,
    args: cfg.args,
    env: { ...sdk.getDefaultEnvironment(), ...cfg.env },
    ...(cfg.cwd ? { cwd: cfg.cwd } : {}),
    stderr: "pipe",
  });
  const stderr = transport.stderr;
  if (stderr) {
    const write = boundedLines(
      (line) => log.info({ stderr: line }, "mcp server stderr"),
      (count) => log.warn({ dropped: count }, "mcp server stderr: lines over the limit of a minute left out"),
      { maxLine: MAX_STDERR_LINE, perMinute: MAX_STDERR_LINES_PER_MINUTE },
    );
    (stderr as unknown as NodeJS.ReadableStream).on("data", write);
  }
  return transport;
}

/**
 * `fetch` whose response bodies stop with an error past MAX_MESSAGE_BYTES (per event for an SSE stream),
 * so a server cannot fill the daemon's memory. `headers` are added to every request, over the SDK's own
 * (which it may give as a `Headers` object: the SSE stream's `Accept: text/event-stream` among them).
 */
function cappedFetch(headers?: Record<string, string>, max = MAX_MESSAGE_BYTES) {
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    let request = init;
    if (headers) {
      const merged = new Headers(init?.headers);
      for (const [name, value] of Object.entries(headers)) merged.set(name, value);
      request = { ...init, headers: merged };
    }
    const res = await fetch(url, request);
    if (!res.body) return res;
    const perEvent = (res.headers.get("content-type") ?? "").includes("text/event-stream");
    const body = res.body.pipeThrough(capBytes(max, perEvent));
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/** Passes bytes on until more than `max` arrive in all, or (`perEvent`) between two blank lines. */
function capBytes(max: number, perEvent: boolean): TransformStream<Uint8Array, Uint8Array> {
  let run = 0;
  let last = 0;
  return new TransformStream({
    transform(chunk, controller) {
      if (!perEvent) run += chunk.length;
      else
        for (const byte of chunk) {
          if (byte === 13) continue;
          run = byte === 10 && last === 10 ? 0 : run + 1;
          last = byte;
        }
      if (run > max) controller.error(new Error(`the server sent a message over ${Math.round(max / 1048576)} MB; it was cut off`));
      else controller.enqueue(chunk);
    },
  });
}
