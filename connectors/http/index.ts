import type { IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type HttpBindings, type ServerType, serve } from "@hono/node-server";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { HttpConfig } from "../../src/config/schema.js";
import type { Connector, ConnectorHealth, Core } from "../../src/connector.js";
import { type App, mountApi } from "./api.js";
import { createFailureLimiter, createSessions } from "./auth.js";
import { mountDashboard } from "./dashboard.js";
import { createHookRunner } from "./hooks.js";
import { apiError } from "./respond.js";

const FORM_LIMIT_BYTES = 64 * 1024;

/**
 * The HTTP door (hono on Node's http server): webhooks, the ask and approvals API, /healthz, and the
 * dashboard. The listen address is read at start; token and hooks follow config reloads.
 */
export function createHttpConnector(core: Core, initial: HttpConfig): Connector {
  const log = core.log.child({ connector: "http" });
  const cfg = () => (core.config().connectors.http.enabled ? core.config().connectors.http : initial);
  const hooks = createHookRunner(core);
  const failures = createFailureLimiter();
  const app = createApp(core, cfg, hooks, failures);
  const { host, port } = parseListen(initial.listen);
  let server: ServerType | undefined;
  let listening = "";

  return {
    name: "http",
    async start() {
      server = await new Promise<ServerType>((resolve, reject) => {
        const s = serve({ fetch: app.fetch, hostname: host, port }, () => resolve(s));
        s.once("error", (err: NodeJS.ErrnoException) => reject(listenError(initial.listen, err)));
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
        if ("closeAllConnections" in s) s.closeAllConnections();
      });
    },
    health(): ConnectorHealth {
      return server?.listening ? { ok: true, detail: `listening on ${listening}` } : { ok: false, detail: "not listening" };
    },
  };
}

function createApp(
  core: Core,
  cfg: () => HttpConfig,
  hooks: ReturnType<typeof createHookRunner>,
  failures: ReturnType<typeof createFailureLimiter>,
) {
  const log = core.log.child({ connector: "http" });
  const app: App = new Hono<{ Bindings: HttpBindings }>();
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    // A body left unread (refused early) must not be taken for the next request on a kept-alive connection.
    if (hasBody(c.req.raw) && (!c.req.raw.bodyUsed || c.res.status === 413)) {
      c.header("Connection", "close");
      lingerOnClose(c.env.incoming);
    }
    c.header("Cache-Control", "no-store");
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("X-Frame-Options", "DENY");
    c.header(
      "Content-Security-Policy",
      "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    // Method, path, status and time only: no query string, headers or body can carry a secret into the log.
    const line = { method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round(performance.now() - started) };
    if (c.req.path === "/healthz") log.debug(line, "http request");
    else log.info(line, "http request");
  });
  const formLimit = bodyLimit({ maxSize: FORM_LIMIT_BYTES, onError: (c) => c.text("form too large", 413) });
  app.use("*", async (c, next) => (c.req.path.startsWith("/v1/") || c.req.method !== "POST" ? next() : formLimit(c, next)));
  const sessions = createSessions(core.store, () => cfg().token);
  mountApi(app, { core, cfg, hooks, failures });
  mountDashboard(app, { core, cfg, sessions, failures });
  app.notFound((c) => apiError(c, 404, "not_found", `no route for ${c.req.method} ${c.req.path}`));
  app.onError((err, c) => {
    log.error({ err, method: c.req.method, path: c.req.path }, "http request failed");
    return apiError(c, 500, "internal", "hermes could not handle this request; the details are in its log");
  });
  return app;
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

/** How long, and how much, of a refused request's unread body is read and dropped before its connection closes. */
const LINGER_MS = 2000;
const LINGER_BYTES = 16 * 1024 * 1024;

/**
 * A lingering close, as nginx does it: a refusal goes out with `Connection: close` while the client may
 * still be sending the body it refuses. Closing the socket right after the response would make the
 * kernel answer the rest of that body with a reset, and a client still writing gets EPIPE instead of the
 * refusal. So after the response only the socket's write side is ended, and the rest of the body is read
 * and dropped until the client has sent it (its end of the connection closes), for at most LINGER_MS
 * and LINGER_BYTES.
 */
function lingerOnClose(incoming: IncomingMessage): void {
  const socket = incoming.socket as Socket & { destroySoon?: () => void };
  let lingering = false;
  // Node's server calls destroySoon() once a `Connection: close` response has been sent.
  socket.destroySoon = () => {
    if (lingering) return;
    lingering = true;
    socket.end();
    let bytes = 0;
    // Closed once the response is out and the client has sent all (or too long, or too much).
    const close = () => {
      clearTimeout(timer);
      if (socket.writableFinished) socket.destroy();
      else socket.once("finish", () => socket.destroy());
    };
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
    if (socket.readableEnded) return close();
    socket.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > LINGER_BYTES) close();
    });
    socket.once("end", close);
    incoming.resume();
  };
}

function hasBody(req: Request): boolean {
  return req.headers.has("transfer-encoding") || Number(req.headers.get("content-length") ?? 0) > 0;
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}
