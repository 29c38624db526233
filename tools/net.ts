import type { IncomingMessage } from "node:http";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { deadline } from "../src/deadline.js";
import { ToolError } from "../src/errors.js";
import { requestFor } from "../src/model/http.js";

/** True for loopback, private, link-local, unique-local, CGNAT and other non-public addresses. */
export function isPrivateAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  let ip = ipaddr.parse(address);
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() !== "unicast";
}

/** Matches a host or address against `allow`: host names, IPs or CIDRs. */
export function isAllowed(host: string, address: string | undefined, allow: string[]): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, "");
  for (const entry of allow) {
    const e = entry.trim().toLowerCase();
    if (e === name) return true;
    if (!address || !ipaddr.isValid(address)) continue;
    try {
      if (e.includes("/")) {
        const [range, bits] = ipaddr.parseCIDR(e);
        const ip = ipaddr.parse(address);
        if (ip.kind() === range.kind() && ip.match(range, bits)) return true;
      } else if (ipaddr.isValid(e) && ipaddr.parse(e).toString() === ipaddr.parse(address).toString()) return true;
    } catch {
      // a malformed allow entry matches nothing
    }
  }
  return false;
}

export function resolveAll(host: string): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, "");
  if (ipaddr.isValid(bare)) return Promise.resolve([bare]);
  return new Promise((resolve, reject) =>
    // node:dns (c-ares) is loaded at the first lookup, not with the tools at start.
    process
      .getBuiltinModule("node:dns")
      .lookup(bare, { all: true }, (err, addresses) =>
        err ? reject(new ToolError(`cannot resolve ${bare}: ${err.code}`)) : resolve(addresses.map((a) => a.address)),
      ),
  );
}

/** Whether a URL leads (by name or by DNS) to a private address that `allow` does not cover. */
export async function needsPrivateConsent(url: string, allow: string[]): Promise<boolean> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  const addresses = await resolveAll(parsed.hostname).catch(() => [] as string[]);
  return addresses.some((a) => isPrivateAddress(a) && !isAllowed(parsed.hostname, a, allow));
}

export interface FetchedPage {
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
  truncated: boolean;
  totalBytes?: number;
}

export interface SafeFetchOptions {
  maxBytes: number;
  timeoutMs: number;
  signal: AbortSignal;
  allow: string[];
  /** Host names that may be private because the owner approved this very call. */
  consented?: Set<string>;
  maxRedirects?: number;
}

/**
 * GET with the checks a model that reads the web needs: only http(s); every hop's address is checked at
 * connect time (no DNS rebinding), and a private address is refused unless allowed or approved; redirects
 * are followed with the same checks; the body is cut at `maxBytes`; the whole request has a deadline.
 */
export async function safeGet(url: string, o: SafeFetchOptions): Promise<FetchedPage> {
  let current = new URL(url);
  const limit = deadline(o.signal, o.timeoutMs);
  try {
    for (let hop = 0; hop <= (o.maxRedirects ?? 5); hop++) {
      if (current.protocol !== "http:" && current.protocol !== "https:") {
        throw new ToolError(`only http and https URLs can be fetched, not ${current.protocol}`);
      }
      const response = await get(current, o, limit.signal);
      const location = response.headers.location;
      if (response.statusCode && response.statusCode >= 300 && response.statusCode < 400 && location) {
        response.resume();
        current = new URL(location, current);
        continue;
      }
      return await readBody(current.toString(), response, o.maxBytes, limit.signal);
    }
    throw new ToolError("too many redirects");
  } finally {
    limit.dispose();
  }
}

function get(url: URL, o: SafeFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const guarded: LookupFunction = (hostname, options, callback) => {
    process.getBuiltinModule("node:dns").lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const list = addresses as { address: string; family: number }[];
      const blocked = list.find(
        (a) => isPrivateAddress(a.address) && !isAllowed(url.hostname, a.address, o.allow) && !o.consented?.has(url.hostname),
      );
      if (blocked) {
        return callback(
          new ToolError(
            `${url.hostname} resolves to the private address ${blocked.address}; call http_get with this URL directly so the owner can approve it`,
          ),
          "",
          0,
        );
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      const first = list[0];
      callback(null, first?.address ?? "", first?.family ?? 4);
    });
  };
  const literal = url.hostname.replace(/^\[|\]$/g, "");
  if (
    ipaddr.isValid(literal) &&
    isPrivateAddress(literal) &&
    !isAllowed(url.hostname, literal, o.allow) &&
    !o.consented?.has(url.hostname)
  ) {
    return Promise.reject(
      new ToolError(`${url.hostname} is a private address; call http_get with this URL directly so the owner can approve it`),
    );
  }
  const request = requestFor(url);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "GET", lookup: guarded, signal, headers: { "user-agent": "hermes/0.1 (+home assistant)", accept: "*/*" } },
      resolve,
    );
    req.on("error", (err) => reject(signal.aborted ? new ToolError("the request timed out") : err));
    req.end();
  });
}

async function readBody(url: string, response: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<FetchedPage> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      if (signal.aborted) throw new ToolError("the request timed out");
      const room = maxBytes - size;
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      size += Math.min(chunk.length, room);
      if (chunk.length >= room) {
        truncated = true;
        break;
      }
    }
  } finally {
    response.destroy();
  }
  const length = Number(response.headers["content-length"]);
  return {
    url,
    status: response.statusCode ?? 0,
    contentType: String(response.headers["content-type"] ?? ""),
    body: Buffer.concat(chunks),
    truncated,
    totalBytes: Number.isFinite(length) ? length : undefined,
  };
}

/** GET from a URL the owner configured (weather, search, feeds in settings): a deadline and a size cap. */
export async function fetchConfigured(url: string, o: { signal: AbortSignal; timeoutMs: number; maxBytes?: number }): Promise<string> {
  const { body } = await fetchConfiguredBytes(url, { ...o, maxBytes: o.maxBytes ?? Number.POSITIVE_INFINITY });
  return body.toString("utf8");
}

/** fetchConfigured's bytes and content type, for bodies whose charset must be worked out (feeds). */
export async function fetchConfiguredBytes(
  url: string,
  o: { signal: AbortSignal; timeoutMs: number; maxBytes: number },
): Promise<{ body: Buffer; contentType: string }> {
  const limit = deadline(o.signal, o.timeoutMs);
  try {
    const res = await fetch(url, { signal: limit.signal, headers: { "user-agent": "hermes/0.1" } }).catch((err: unknown) => {
      const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
      throw new ToolError(`cannot reach ${new URL(url).host}: ${limit.timedOut() ? "timed out" : cause}`);
    });
    if (!res.ok) throw new ToolError(`${new URL(url).host} answered HTTP ${res.status}`);
    const body = Buffer.from(await res.arrayBuffer());
    return { body: body.length > o.maxBytes ? body.subarray(0, o.maxBytes) : body, contentType: res.headers.get("content-type") ?? "" };
  } finally {
    limit.dispose();
  }
}
