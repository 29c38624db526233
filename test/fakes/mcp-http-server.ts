/** A fake MCP server over Streamable HTTP on 127.0.0.1 (the SDK's server side), behind a bearer token. */
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
// @ts-expect-error: a plain ESM module shared with the stdio server script
import { createTestServer } from "./mcp-tools.mjs";
import { readBody } from "./model-server.js";

export interface FakeMcpHttp {
  url: string;
  /** Authorization headers the server saw. */
  authorizations: string[];
  /** Drops every session, as a restarted server would: requests with an old session id get 404. */
  forgetSessions(): void;
  close(): Promise<void>;
}

/** `legacy`: only the older HTTP+SSE transport (GET opens the stream, POST /messages carries requests). */
export async function startFakeMcpHttp(options: { token: string; ledger?: string; legacy?: boolean }): Promise<FakeMcpHttp> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const legacy = new Map<string, SSEServerTransport>();
  const sockets = new Set<Socket>();
  const authorizations: string[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    authorizations.push(String(req.headers.authorization ?? ""));
    if (req.headers.authorization !== `Bearer ${options.token}`) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
      return;
    }
    if (options.legacy) return handleLegacy(req, res);
    const body = req.method === "POST" ? JSON.parse(await readBody(req)) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? transports.get(id) : undefined;
    if (!transport && isInitializeRequest(body)) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void transports.set(sid, created),
      });
      await createTestServer({ ledger: options.ledger, name: "home" }).connect(created);
      transport = created;
    }
    if (!transport) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end('{"jsonrpc":"2.0","error":{"code":-32000,"message":"no session"},"id":null}');
      return;
    }
    await transport.handleRequest(req, res, body);
  };
  const handleLegacy = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method === "GET" && url.pathname === "/mcp") {
      const transport = new SSEServerTransport("/messages", res);
      legacy.set(transport.sessionId, transport);
      await createTestServer({ ledger: options.ledger, name: "home" }).connect(transport);
      return;
    }
    const transport = legacy.get(url.searchParams.get("sessionId") ?? "");
    if (req.method === "POST" && url.pathname === "/messages" && transport) return transport.handlePostMessage(req, res);
    res.writeHead(405).end("method not allowed");
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(500).end());
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    authorizations,
    forgetSessions: () => transports.clear(),
    close: async () => {
      for (const t of [...transports.values(), ...legacy.values()]) await t.close().catch(() => {});
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
