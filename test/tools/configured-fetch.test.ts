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
  const config = configSchema.parse({ timezone: "UTC", tools });
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
