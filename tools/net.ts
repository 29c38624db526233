import type { IncomingMessage } from "node:http";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { deadline } from "../src/deadline.js";
import { ToolError } from "../src/errors.js";
import { requestFor } from "../src/net/request.js";

/** True for loopback, private, link-local, unique-local, CGNAT and other non-public addresses. */
export function isPrivateAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  let ip = ipaddr.parse(address);
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  // An IPv4-compatible address (::/96, deprecated: `[::127.0.0.1]` is `::7f00:1`) is no public one either.
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) return true;
  return ip.range() !== "unicast";
}

/** Matches a host or address against `allow`: host names, IPs or CIDRs. */
export function isAllowed(host: string, address: string | undefined, allow: string[]): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, "");
  for (const entry of allow) {
    // An IPv6 host keeps its brackets in a URL (`[::1]`), not in the address it is checked as: on either side.
    const e = entry
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, "");
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

/** Turns a host name (or an address literal) into the addresses to connect to. */
export type Resolver = (host: string) => Promise<string[]>;

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
export async function needsPrivateConsent(url: string, allow: string[], resolve: Resolver = resolveAll): Promise<boolean> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  const addresses = await resolve(parsed.hostname).catch(() => [] as string[]);
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
  /** How host names become addresses: the system's resolver unless a test brings its own. */
  resolve?: Resolver;
  maxRedirects?: number;
  /** What a refusal of a private address tells the model to do (by default: call http_get so the owner can approve it). */
  privateHint?: string;
}

/**
 * GET with the checks a model that reads the web needs: only http(s); every hop's host is resolved once and
 * the request connects to exactly the addresses that were checked (no DNS rebinding), and a private address is refused unless allowed or approved; redirects
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
      return await readBody(current.toString(), response, o.maxBytes, limit.signal).catch((err: unknown) => {
        throw limit.signal.aborted ? new ToolError("the request timed out") : err;
      });
    }
    throw new ToolError("too many redirects");
  } finally {
    limit.dispose();
  }
}

/**
 * One request. The host is resolved once, the answer is checked, and the socket connects only to the
 * addresses that were checked: the lookup handed to the request is bound to that answer and never asks DNS
 * again, so a name that answers a public address to the check and 127.0.0.1 to the connect gets nowhere.
 */
async function get(url: URL, o: SafeFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const addresses = await (o.resolve ?? resolveAll)(url.hostname);
  if (addresses.length === 0) throw new ToolError(`cannot resolve ${url.hostname}`);
  const blocked = addresses.find((a) => isPrivateAddress(a) && !isAllowed(url.hostname, a, o.allow) && !o.consented?.has(url.hostname));
  if (blocked) {
    const literal = ipaddr.isValid(url.hostname.replace(/^\[|\]$/g, ""));
    throw new ToolError(
      `${url.hostname} ${literal ? "is a private address" : `resolves to the private address ${blocked}`}; ${o.privateHint ?? "call http_get with this URL directly so the owner can approve it"}`,
    );
  }
  const request = requestFor(url);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "GET", lookup: boundLookup(addresses), signal, headers: { "user-agent": "hermes/0.1 (+home assistant)", accept: "*/*" } },
      resolve,
    );
    req.on("error", (err) => reject(signal.aborted ? new ToolError("the request timed out") : err));
    req.end();
  });
}

/** A lookup that answers with the addresses already checked, whatever name it is asked about. */
export function boundLookup(addresses: string[]): LookupFunction {
  const list = addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  return (_hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? list.filter((a) => a.family === options.family) : list;
    const answer = wanted.length ? wanted : list;
    if (options.all) return (callback as unknown as (e: null, a: typeof list) => void)(null, answer);
    const first = answer[0] as (typeof list)[number];
    callback(null, first.address, first.family);
  };
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

/** What a configured URL's answer may take when its caller names no cap (a weather or search API's JSON). */
const CONFIGURED_MAX_BYTES = 2_000_000;

export interface ConfiguredFetchOptions {
  signal: AbortSignal;
  timeoutMs: number;
  maxBytes?: number;
  /** The owner's private hosts (`tools.http_get.allow`): a redirect may lead there too. */
  allow?: string[];
  resolve?: Resolver;
}

/**
 * GET from a URL the owner configured (weather, search, feeds and calendars in settings): a deadline and a size
 * cap. The configured host may be private (a SearXNG or a calendar on the home network: the owner chose it),
 * but a redirect to another host is checked as http_get checks one: a public host that answers with a redirect
 * into the home network (the router's page, Ollama's API) gets no request there, unless `allow` names it.
 */
export async function fetchConfigured(url: string, o: ConfiguredFetchOptions): Promise<string> {
  const { body } = await fetchConfiguredBytes(url, o);
  return body.toString("utf8");
}

/** fetchConfigured's bytes and content type, for bodies whose charset must be worked out (feeds). */
export async function fetchConfiguredBytes(url: string, o: ConfiguredFetchOptions): Promise<{ body: Buffer; contentType: string }> {
  const { host, hostname } = new URL(url);
  const page = await safeGet(url, {
    maxBytes: o.maxBytes ?? CONFIGURED_MAX_BYTES,
    timeoutMs: o.timeoutMs,
    signal: o.signal,
    allow: [hostname, ...(o.allow ?? [])],
    resolve: o.resolve,
    privateHint: `${host} redirected there, and a configured URL's redirect may not lead into the home network unless tools.http_get.allow names the host`,
  }).catch((err: unknown) => {
    if (err instanceof ToolError) throw err;
    throw new ToolError(`cannot reach ${host}: ${(err as Error).message}`);
  });
  if (page.status < 200 || page.status >= 300) throw new ToolError(`${host} answered HTTP ${page.status}`);
  return { body: page.body, contentType: page.contentType };
}
