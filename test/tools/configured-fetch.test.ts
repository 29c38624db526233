/**
 * Feeds from tools.feeds.urls and calendars from tools.calendar.sources are read up to a cap (2 MB, 5 MB).
 * The whole answer used to be taken in first and cut after: a host that streams without end (a broken or
 * hostile news site) filled memory until the tool's deadline (~200 MB in 4 s here, at 50 MB a second), and the call failed.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/schema.js";
import { openStore } from "../../src/store/store.js";
import { loadTools } from "../../src/tools/registry.js";
import type { AnyTool } from "../../src/tools/types.js";

let server: Server;
let base: string;
/** Bytes the endless server handed to its sockets, per request path. */
const sent = new Map<string, number>();
const store = openStore(":memory:");
const CHUNK = Buffer.alloc(256 * 1024, " ");

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? "";
    const head = path.startsWith("/feed")
      ? '<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><title>Hello from the feed</title></item></channel></rss>\n'
      : "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nX-PAD:";
    res.writeHead(200, { "content-type": path.startsWith("/feed") ? "application/rss+xml" : "text/calendar" });
    res.write(head);
    sent.set(path, 0);
    // Endless, ~50 MB a second.
    const timer = setInterval(() => {
      if (res.destroyed) return clearInterval(timer);
      res.write(CHUNK);
      sent.set(path, (sent.get(path) ?? 0) + CHUNK.length);
    }, 5);
    res.on("close", () => clearInterval(timer));
  }).listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
  store.close();
});

async function runTool(name: "feeds" | "calendar", tools: object): Promise<string> {
  const config = configSchema().parse({ timezone: "UTC", tools });
  const { tools: set } = await loadTools([name], { config, store, now: () => new Date("2026-12-01T12:00:00Z") });
  const tool = set.get(name) as AnyTool;
  const ctx = { signal: new AbortController().signal, sessionKey: "cli:t", channel: "cli:t", runId: "r", callId: "c" };
  return tool.run(tool.input.parse({}), ctx).catch((e: Error) => `error: ${e.message}`);
}

describe("an endless answer from a configured source", () => {
  it("feeds reads its first 2 MB and answers from them, and the download stops there", async () => {
    const out = await runTool("feeds", { feeds: { urls: [`${base}/feed`], timeout_s: 5 } });
    expect(out).toContain("Hello from the feed");
    expect(sent.get("/feed")).toBeLessThan(16_000_000); // the cap, and what the sockets' buffers held
  });

  it("calendar reads its first 5 MB and stops there", async () => {
    const out = await runTool("calendar", { calendar: { sources: [`${base}/cal.ics`], timeout_s: 5 } });
    expect(out).not.toMatch(/timed out/);
    expect(sent.get("/cal.ics")).toBeLessThan(20_000_000);
  });
});

describe("a redirect from a configured source", () => {
  let home: Server;
  let outside: Server;
  let homeUrl: string;
  let outsideUrl: string;
  const homeHits: string[] = [];
  const rss = (title: string) =>
    `<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><title>${title}</title></item></channel></rss>`;

  beforeAll(async () => {
    // The "home network" host: 127.0.0.3, private, not configured anywhere.
    home = createServer((req, res) => {
      homeHits.push(req.url ?? "");
      res.writeHead(200, { "content-type": "application/rss+xml" });
      res.end(rss("From the router"));
    }).listen(0, "127.0.0.3");
    await once(home, "listening");
    homeUrl = `http://127.0.0.3:${(home.address() as AddressInfo).port}`;
    // The configured host, on 127.0.0.2: it redirects within itself, and into the home network.
    outside = createServer((req, res) => {
      if (req.url === "/moved") res.writeHead(301, { location: "/feed" }).end();
      else if (req.url === "/inward") res.writeHead(302, { location: `${homeUrl}/admin` }).end();
      else res.writeHead(200, { "content-type": "application/rss+xml" }).end(rss("From the news site"));
    }).listen(0, "127.0.0.2");
    await once(outside, "listening");
    outsideUrl = `http://127.0.0.2:${(outside.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    home.close();
    outside.close();
  });

  it("is followed within the configured host, and refused into another private one unless http_get.allow names it", async () => {
    expect(await runTool("feeds", { feeds: { urls: [`${outsideUrl}/moved`] } })).toContain("From the news site");
    const refused = await runTool("feeds", { feeds: { urls: [`${outsideUrl}/inward`] } });
    expect(refused).toContain("error: ");
    expect(refused).toContain("127.0.0.3 is a private address");
    expect(refused).toContain("redirect may not lead into the home network unless tools.http_get.allow names the host");
    const calendar = await runTool("calendar", { calendar: { sources: [`${outsideUrl}/inward`] } });
    expect(calendar).toContain("127.0.0.3 is a private address");
    expect(homeHits).toEqual([]);
    const allowed = await runTool("feeds", { feeds: { urls: [`${outsideUrl}/inward`] }, http_get: { allow: ["127.0.0.3"] } });
    expect(allowed).toContain("From the router");
    expect(homeHits).toEqual(["/admin"]);
  });
});

describe("a configured source on an IPv6 address", () => {
  it("is read, as one on an IPv4 address is (the configured host may be private)", async () => {
    const v6 = createServer((_req, res) =>
      res
        .writeHead(200, { "content-type": "application/rss+xml" })
        .end('<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><title>From a v6 host</title></item></channel></rss>'),
    ).listen(0, "::1");
    await once(v6, "listening");
    try {
      const out = await runTool("feeds", { feeds: { urls: [`http://[::1]:${(v6.address() as AddressInfo).port}/feed`] } });
      expect(out).toContain("From a v6 host");
    } finally {
      v6.close();
    }
  });
});
