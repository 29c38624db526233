import type { Agent } from "node:http";
import type { Readable } from "node:stream";
import { HttpError, type Transformer } from "grammy";
import { requestFor } from "../../src/net/request.js";
import { sleep } from "../../src/net/sleep.js";

/** Pauses between attempts while Telegram cannot be reached: the first, and the longest. */
export interface NetworkPause {
  firstMs: number;
  maxMs: number;
}

/** Once the network is back, a waiting reply goes out within a minute. */
export const NETWORK_PAUSE: NetworkPause = { firstMs: 3000, maxMs: 60_000 };

/**
 * An API transformer: a call that fails because Telegram cannot be reached (no network, DNS, a reset
 * connection: grammY's HttpError) is made again after a pause that doubles up to `pause.maxMs`, until
 * it goes through or `life` ends. grammY's auto-retry does the same with pauses doubling up to an
 * hour, so after a long outage a reply could arrive an hour after the network came back.
 */
export function retryWhileUnreachable(
  life: AbortSignal,
  onPause: (method: string, err: HttpError, pauseMs: number) => void,
  pause: NetworkPause = NETWORK_PAUSE,
): Transformer {
  return async (prev, method, payload, signal) => {
    for (let ms = pause.firstMs; ; ms = Math.min(pause.maxMs, ms * 2)) {
      try {
        return await prev(method, payload, signal);
      } catch (err) {
        if (!(err instanceof HttpError) || life.aborted || signal?.aborted) throw err;
        onPause(method, err, ms);
        await sleep(ms, life);
        if (life.aborted || signal?.aborted) throw err;
      }
    }
  };
}

/** What grammY passes to its `fetch`: its JSON (a string) or multipart (a stream) payload, its keep-alive agent. */
export interface BotApiRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Readable;
  signal?: AbortSignal;
  agent?: Agent;
}

/** The answer grammY reads: only `json()`. */
export interface BotApiAnswer {
  ok: boolean;
  status: number;
  json(): Promise<unknown>;
  text(): Promise<string>;
}

/**
 * grammY's `fetch` (its `client.fetch` option), over node:http(s) on grammY's own keep-alive agent.
 * grammY reads nothing of an answer but its JSON; node-fetch, its default on Node, builds a WHATWG
 * Request, Headers and a body stream for every call, which cost more CPU than the rest of a reply's
 * call. Resolves once the whole answer is in; a failure of the network or of the signal rejects, and
 * grammY turns that into its HttpError as it does for node-fetch.
 */
export function botApiFetch(url: string, init: BotApiRequest = {}): Promise<BotApiAnswer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = requestFor(target);
    const body = init.body;
    const headers = typeof body === "string" ? { ...init.headers, "content-length": String(Buffer.byteLength(body)) } : init.headers;
    const req = request(target, { method: init.method ?? "GET", headers, agent: init.agent, signal: init.signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const status = res.statusCode ?? 0;
        resolve({ ok: status >= 200 && status < 300, status, text: async () => text, json: async () => JSON.parse(text) });
      });
    });
    req.on("error", reject);
    if (body === undefined || typeof body === "string") req.end(body);
    else {
      body.on("error", (err) => req.destroy(err));
      body.pipe(req);
    }
  });
}
