import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Config, HttpConfig } from "../../src/config/schema.js";
import type { Connector, ConnectorHealth, Core } from "../../src/connector.js";
import { errorMessage } from "../../src/errors.js";
import type { requestListener } from "./app.js";
import { createFailureLimiter } from "./auth.js";
import { createHookRunner } from "./hooks.js";

type Listener = ReturnType<typeof requestListener>;

/**
 * The HTTP door (hono on Node's http server): webhooks, the ask and approvals API, /healthz, and the
 * dashboard. The listen address is read at start; token and hooks follow config reloads.
 *
 * The server listens from the start, but hono and its routes (app.ts) are loaded by the first request:
 * @hono/node-server builds on the WHATWG Request and Response, that is on Node's fetch (undici), and
 * loading that brings TLS, HTTP/2 and zlib, 9–13 MB of memory, into a daemon that may take one webhook
 * a day. The first request waits for that load (tens of milliseconds); later ones do not.
 */
export function createHttpConnector(core: Core, initial: HttpConfig): Connector {
  const log = core.log.child({ connector: "http" });
  // `enabled` applies at a restart: a reload that turns the door off leaves it listening with the settings
  // last given while it was on (a token rotated then stays rotated), not those it started with. Kept at
  // each reload (below).
  let lastOn = initial;
  const keep = (config: Config) => {
    if (config.connectors.http.enabled) lastOn = config.connectors.http;
  };
  const cfg = () => lastOn;
  const hooks = createHookRunner(core);
  const failures = createFailureLimiter();
  const { host, port } = parseListen(initial.listen);
  let server: Server | undefined;
  let listening = "";
  let app: Promise<Listener> | undefined;
  /** Why the routes could not be loaded, while they cannot: health says so; the next request tries again. */
  let loadFailed: string | undefined;
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    app ??= import("./app.js").then((m) => m.requestListener({ core, cfg, hooks, failures, hostname: host }));
    app.then(
      (listener) => {
        loadFailed = undefined;
        listener(req, res);
      },
      (err: unknown) => {
        app = undefined;
        // Logged once per failure, not once per request: anyone who reaches the port could flood the log.
        if (loadFailed === undefined) log.error({ err }, "the HTTP connector could not load its routes");
        loadFailed = errorMessage(err);
        res
          .writeHead(500, { "content-type": "text/plain; charset=utf-8", connection: "close" })
          .end("hermes could not load its HTTP routes; the details are in its log\n");
      },
    );
  };

  return {
    name: "http",
    reload: keep,
    async start() {
      server = await new Promise<Server>((resolve, reject) => {
        // A request's headers within 20 s and its body within 2 minutes (Node's default: 5 minutes each),
        // so a client that sends a body slowly, or not at all, does not hold its connection and memory long.
        const s = createServer({ headersTimeout: 20_000, requestTimeout: 120_000 }, handle);
        s.once("error", (err: NodeJS.ErrnoException) => reject(listenError(initial.listen, err)));
        s.listen(port, host, () => resolve(s));
      });
      server.on("error", (err) => log.error({ err }, "http server error"));
      const address = server.address() as AddressInfo;
      listening = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
      if (!isLoopback(host)) log.warn({ listen: initial.listen }, "the HTTP connector listens beyond this machine: put TLS in front of it");
      log.info({ listen: listening, hooks: initial.hooks.length }, "http listening");
    },
    async stop() {
      hooks.stop();
      const s = server;
      if (!s) return;
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      });
    },
    health(): ConnectorHealth {
      if (!server?.listening) return { ok: false, detail: "not listening" };
      if (loadFailed !== undefined) return { ok: false, detail: `listening on ${listening}, but its routes failed to load: ${loadFailed}` };
      return { ok: true, detail: `listening on ${listening}` };
    },
  };
}

/** `127.0.0.1:8787`, `[::1]:8787`, `0.0.0.0:8787` (checked by the config schema). */
export function parseListen(listen: string): { host: string; port: number } {
  const at = listen.lastIndexOf(":");
  return { host: listen.slice(0, at).replace(/^\[|\]$/g, ""), port: Number(listen.slice(at + 1)) };
}

function listenError(listen: string, err: NodeJS.ErrnoException): Error {
  const why =
    err.code === "EADDRINUSE"
      ? "the address is in use (another program, or another hermes, listens there): pick another port"
      : err.code === "EADDRNOTAVAIL"
        ? "this machine has no such address"
        : err.message;
  return new Error(`connectors.http.listen ${listen}: ${why}`);
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}
