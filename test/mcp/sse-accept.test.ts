/** The older HTTP+SSE transport's stream GET carries the headers the SDK sets (Accept, protocol version), plus the server's. */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/log.js";
import { loadSdk } from "../../src/mcp/sdk.js";
import { createSession } from "../../src/mcp/session.js";
import type { McpSession } from "../../src/mcp/types.js";
// @ts-expect-error: a plain ESM module shared with the stdio server script
import { createTestServer } from "../fakes/mcp-tools.mjs";

describe("HTTP+SSE fallback", () => {
  let session: McpSession | undefined;
  const gets: { accept?: string; authorization?: string }[] = [];
  const transports = new Map<string, SSEServerTransport>();
  // Like many SSE servers (and proxies in front of them): the stream is served only to a client that accepts it.
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "GET" && url.pathname === "/mcp") {
      gets.push({ accept: req.headers.accept, authorization: req.headers.authorization });
      if (!String(req.headers.accept).includes("text/event-stream")) return void res.writeHead(406).end("Not Acceptable");
      const t = new SSEServerTransport("/messages", res);
      transports.set(t.sessionId, t);
      await createTestServer({ name: "old" }).connect(t);
      return;
    }
    const t = transports.get(url.searchParams.get("sessionId") ?? "");
    if (req.method === "POST" && url.pathname === "/messages" && t) return void t.handlePostMessage(req, res);
    res.writeHead(405).end();
  });
  afterEach(async () => {
    await session?.close();
    server.closeAllConnections();
    server.close();
  });

  it("sends Accept: text/event-stream with the stream's GET, and connects", async () => {
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const yaml = `mcp:\n  servers:\n    old:\n      url: ${url}\n      headers: { Authorization: "Bearer t" }\ntools:\n  enabled: ["old__*"]\n`;
    const cfg = parseConfig(yaml, "/tmp/hermes.yaml", {}).config.mcp.servers.old;
    if (!cfg) throw new Error("no server");
    session = createSession("old", cfg, { sdk: loadSdk, log: createLogger("silent"), cached: [], onTools: () => {}, retryBaseMs: 60_000 });
    session.start();
    await session.firstAttempt();
    expect(gets[0]).toEqual({ accept: "text/event-stream", authorization: "Bearer t" });
    expect(session.status()).toMatchObject({ phase: "connected", transport: "sse" });
  });
});
