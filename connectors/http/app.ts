// The HTTP door's application: hono's routes for the API, webhooks and dashboard, and Node's request
// listener for them. Loaded by the first request (index.ts says why).
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { getRequestListener, type HttpBindings } from "@hono/node-server";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { HttpConfig } from "../../src/config/schema.js";
import type { Core } from "../../src/connector.js";
import { type App, mountApi } from "./api.js";
import { type createFailureLimiter, createSessions } from "./auth.js";
import { mountDashboard } from "./dashboard.js";
import type { createHookRunner } from "./hooks.js";
import { mountOpenAi } from "./openai.js";
import { apiError } from "./respond.js";

const FORM_LIMIT_BYTES = 64 * 1024;

export interface AppParts {
  core: Core;
  cfg: () => HttpConfig;
  hooks: ReturnType<typeof createHookRunner>;
  failures: ReturnType<typeof createFailureLimiter>;
  /** The listen host, for the URLs of requests that name none. */
  hostname: string;
}

/** Node's request listener for the door's hono app. */
export function requestListener(parts: AppParts): ReturnType<typeof getRequestListener> {
  return getRequestListener(createApp(parts).fetch, { hostname: parts.hostname });
}

function createApp({ core, cfg, hooks, failures }: AppParts): App {
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
  mountOpenAi(app, { core, cfg, failures }); // before mountApi: its routes answer in OpenAI's shape, errors included
  mountApi(app, { core, cfg, hooks, failures });
  mountDashboard(app, { core, cfg, sessions, failures });
  app.notFound((c) => apiError(c, 404, "not_found", `no route for ${c.req.method} ${c.req.path}`));
  app.onError((err, c) => {
    log.error({ err, method: c.req.method, path: c.req.path }, "http request failed");
    return apiError(c, 500, "internal", "hermes could not handle this request; the details are in its log");
  });
  return app;
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
