import type { HttpBindings } from "@hono/node-server";
import type { Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { streamSSE } from "hono/streaming";
import type { AgentEvent } from "../../src/agent/types.js";
import type { HttpConfig } from "../../src/config/schema.js";
import type { Core, DaemonStatus } from "../../src/connector.js";
import { errorMessage } from "../../src/errors.js";
import { bearerOk, type createFailureLimiter, signatureOk } from "./auth.js";
import { clientAddress } from "./client-address.js";
import type { HookRunner } from "./hooks.js";
import { apiError, MAX_BODY_BYTES, type ParsedBody, readBody } from "./respond.js";

export type App = Hono<{ Bindings: HttpBindings }>;

export interface ApiDeps {
  core: Core;
  cfg: () => HttpConfig;
  hooks: HookRunner;
  failures: ReturnType<typeof createFailureLimiter>;
}

const SESSION = /^[\w.:-]{1,64}$/;

/** Who is asking, for counting failed attempts: the peer, or the client a trusted proxy names. */
export function clientOf(c: Context<{ Bindings: HttpBindings }>, proxies: readonly string[]): string {
  return clientAddress(c.env.incoming.socket.remoteAddress ?? "unknown", c.req.header("x-forwarded-for"), proxies);
}

/** The JSON API under /v1 (bearer token; hooks may be signed instead) and /healthz (no auth). */
export function mountApi(app: App, d: ApiDeps): void {
  app.use("/v1/*", async (c, next) => {
    // The right token always gets in: failures by others (or forged from the owner's browser) never lock it out.
    if (c.req.path.startsWith("/v1/hooks/") || bearerOk(c.req.header("authorization"), d.cfg().token)) return next();
    const who = clientOf(c, d.cfg().trusted_proxies);
    if (d.failures.blocked(who)) return apiError(c, 429, "rate_limited", "too many failed attempts; wait a minute");
    d.failures.fail(who);
    return apiError(c, 401, "unauthorized", "send the token as 'Authorization: Bearer <token>'");
  });
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => apiError(c, 413, "too_large", `the body may be at most ${MAX_BODY_BYTES} bytes`),
    }),
  );
  app.post("/v1/hooks/:name", (c) => hook(c, d));
  app.post("/v1/ask", (c) => ask(c, d.core));
  app.get("/v1/approvals", (c) => c.json({ approvals: d.core.store.approvals.pending() }));
  app.post("/v1/approvals/:id", (c) => decide(c, d.core));
  app.get("/v1/status", async (c) => c.json(await d.core.status()));
  app.get("/healthz", async (c) => {
    const reasons = unhealthy(await d.core.status());
    return reasons.length ? c.json({ ok: false, reason: reasons.join("; ") }, 503) : c.json({ ok: true });
  });
}

/**
 * Signed hook calls whose bodies (up to 1 MiB each) are being read before their signature can be checked;
 * beyond this many at once the next is answered 503, so strangers cannot fill the memory with bodies.
 */
const MAX_UNVERIFIED_READS = 16;
let unverifiedReads = 0;

/** A body read before its sender is known, counted among MAX_UNVERIFIED_READS while it is read. */
async function readUnverified(c: Context): Promise<ParsedBody> {
  unverifiedReads++;
  try {
    return await readBody(c, { form: true });
  } finally {
    unverifiedReads--;
  }
}

async function hook(c: Context<{ Bindings: HttpBindings }>, d: ApiDeps): Promise<Response> {
  const hook = d.cfg().hooks.find((h) => h.name === c.req.param("name"));
  if (!hook) return apiError(c, 404, "not_found", `there is no hook named ${JSON.stringify(c.req.param("name"))}`);
  const byToken = bearerOk(c.req.header("authorization"), d.cfg().token);
  const who = clientOf(c, d.cfg().trusted_proxies);
  // As everywhere under /v1: a client with 30 failures in a minute gets 429 for its failures. The right token
  // always gets in, and so does a right signature: webhook senders share addresses (GitHub's pool), so
  // another's bad deliveries must not turn away this hook's.
  const refuse = (message: string) => {
    if (d.failures.blocked(who)) return apiError(c, 429, "rate_limited", "too many failed attempts; wait a minute");
    d.failures.fail(who);
    return apiError(c, 401, "unauthorized", message);
  };
  if (!byToken && !hook.secret) return refuse("send the token as 'Authorization: Bearer <token>'");
  // A signed call's body is read before anyone is known to have sent it: only so many at once.
  if (!byToken && unverifiedReads >= MAX_UNVERIFIED_READS)
    return apiError(c, 503, "busy", "too many unsigned bodies being read; try again shortly");
  const body = byToken ? await readBody(c, { form: true }) : await readUnverified(c);
  if (!body.ok) return body.response;
  if (!byToken && !signatureOk(c.req.header("x-hub-signature-256"), hook.secret, body.raw))
    return refuse("bad or missing X-Hub-Signature-256 (sha256=<hex HMAC of the body>) and no bearer token");
  if (c.req.header("x-github-event") === "ping") return c.json({ ok: true, pong: true });
  const delivery = c.req.header("x-github-delivery")?.trim();
  if (delivery && /^[\w-]{1,100}$/.test(delivery)) {
    // A replayed delivery (the same X-GitHub-Delivery, from GitHub's redeliver or a retry) answers with
    // the run the first one started, and starts nothing, unless that run never started (it waited for the
    // hook's interval when hermes stopped). The id is not signed: a captured request sent under a new id
    // runs again (docs/security.md says so).
    let coalesced = false;
    const live = (runId: string) => d.hooks.owes(runId) || d.core.store.history.run(runId) !== undefined;
    const once = d.core.store.inbound.recordDelivery(
      `hook:${hook.name}`,
      delivery,
      () => {
        const accepted = d.hooks.accept(hook, body.value);
        coalesced = accepted.coalesced;
        return accepted.runId;
      },
      live,
    );
    if (once.duplicate) return c.json({ run_id: once.runId, duplicate: true }, 200);
    return c.json({ run_id: once.runId, ...(coalesced ? { coalesced: true } : {}) }, 202);
  }
  const accepted = d.hooks.accept(hook, body.value);
  return c.json({ run_id: accepted.runId, ...(accepted.coalesced ? { coalesced: true } : {}) }, 202);
}

async function ask(c: Context, core: Core): Promise<Response> {
  const body = await readBody(c, { form: false });
  if (!body.ok) return body.response;
  const req = (body.value ?? {}) as { session?: unknown; text?: unknown };
  const session = req.session ?? "default";
  if (typeof session !== "string" || !SESSION.test(session))
    return apiError(c, 400, "bad_request", '"session" must be a name of letters, digits, ".", "_", ":" or "-"');
  if (typeof req.text !== "string" || !req.text.trim()) return apiError(c, 400, "bad_request", '"text" must be a non-empty string');
  const submit = (listener?: (e: AgentEvent) => void) =>
    core.submit({ sessionKey: `http:${session}`, text: req.text as string, source: "http", ...(listener ? { listener } : {}) });
  if (!(c.req.header("accept") ?? "").includes("text/event-stream")) {
    const outcome = await submit().done;
    return c.json({ run_id: outcome.runId, reply: outcome.reply, stop_reason: outcome.stopReason });
  }
  return streamSSE(
    c,
    async (stream) => {
      let chain = Promise.resolve();
      const send = (type: string, data: unknown) => {
        chain = chain
          .then(() => (stream.aborted ? undefined : stream.writeSSE({ event: type, data: JSON.stringify(data) })))
          .catch(() => {});
      };
      const outcome = await submit((event) => send(event.type, event)).done;
      send("done", { type: "done", run_id: outcome.runId, reply: outcome.reply, stop_reason: outcome.stopReason });
      await chain;
    },
    async (err, stream) => {
      core.log.error({ err, connector: "http" }, "ask over SSE failed");
      await stream.writeSSE({ event: "error", data: JSON.stringify({ type: "error", message: errorMessage(err) }) }).catch(() => {});
    },
  );
}

async function decide(c: Context, core: Core): Promise<Response> {
  const body = await readBody(c, { form: false });
  if (!body.ok) return body.response;
  const approve = (body.value as { approve?: unknown } | null)?.approve;
  if (typeof approve !== "boolean") return apiError(c, 400, "bad_request", '"approve" must be true or false');
  const result = core.decide(c.req.param("id") ?? "", approve, "http");
  if (result.ok) return c.json({ ok: true, status: result.approval.status, message: result.message });
  if (result.code === "unknown") return apiError(c, 404, "unknown_approval", result.message);
  return apiError(c, 409, result.code, result.message);
}

/** Why an uptime checker should be told hermes is not well; empty when it is. No addresses or paths. */
export function unhealthy(s: DaemonStatus): string[] {
  const reasons: string[] = [];
  if (s.model.reachable !== true) reasons.push("model endpoint unreachable");
  else if (/not pulled|not offered/.test(s.model.detail)) reasons.push("model not available on its endpoint");
  for (const c of s.connectors) if (!c.ok) reasons.push(`connector ${c.name} down`);
  return reasons;
}
