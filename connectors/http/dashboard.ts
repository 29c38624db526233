import type { HttpBindings } from "@hono/node-server";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { html } from "hono/html";
import type { HttpConfig } from "../../src/config/schema.js";
import type { Core } from "../../src/connector.js";
import { RecentStore } from "../../src/store/recent.js";
import type { App } from "./api.js";
import { clientOf } from "./api.js";
import { type createFailureLimiter, type DashboardSession, SESSION_COOKIE, SESSION_MAX_AGE_S, type Sessions, sameSecret } from "./auth.js";
import { DASHBOARD_SCRIPT, liveEvents } from "./live.js";
import { mountSearch } from "./search.js";
import { STYLE } from "./style.js";
import * as v from "./views.js";
import { sessionsBody, usageCards } from "./views-usage.js";

export interface DashboardDeps {
  core: Core;
  cfg: () => HttpConfig;
  sessions: Sessions;
  failures: ReturnType<typeof createFailureLimiter>;
}

type Ctx = Context<{ Bindings: HttpBindings }>;

/** The Sessions page lists the newest sessions. */
const SESSIONS_SHOWN = 50;

const RESULTS = new Set(["ok", "already_decided", "expired", "unknown"]);

/** The dashboard: server-rendered pages behind a token login; every form carries the session's CSRF token. */
export function mountDashboard(app: App, d: DashboardDeps): void {
  const recent = new RecentStore(d.core.store.db);
  const zone = () => d.core.config().timezone;
  const sessionOf = (c: Ctx) => d.sessions.get(getCookie(c, SESSION_COOKIE));

  app.get("/style.css", (c) => c.body(STYLE, 200, { "content-type": "text/css; charset=utf-8" }));
  app.get("/dashboard.js", (c) => c.body(DASHBOARD_SCRIPT, 200, { "content-type": "text/javascript; charset=utf-8" }));
  app.get("/login", (c) => (sessionOf(c) ? c.redirect("/", 303) : c.html(v.loginPage())));
  app.post("/login", async (c) => {
    // A login form is only ever posted from hermes's own page: another site's form posting wrong tokens from
    // the owner's browser is refused and not counted, so it cannot lock the owner out.
    const site = c.req.header("sec-fetch-site");
    if (site && site !== "same-origin" && site !== "none") return c.html(v.loginPage("Log in from this page."), 403);
    const form = await formOf(c);
    if (!sameSecret(form.get("token") ?? "", d.cfg().token)) {
      const who = clientOf(c, d.cfg().trusted_proxies);
      if (d.failures.blocked(who)) return c.html(v.loginPage("Too many failed attempts; wait a minute."), 429);
      d.failures.fail(who);
      return c.html(v.loginPage("That is not the token."), 401);
    }
    const { id } = d.sessions.create();
    const secure = c.req.header("x-forwarded-proto") === "https" || new URL(c.req.url).protocol === "https:";
    setCookie(c, SESSION_COOKIE, id, { httpOnly: true, sameSite: "Strict", path: "/", maxAge: SESSION_MAX_AGE_S, secure });
    return c.redirect("/", 303);
  });

  /** Everything below needs a session; a form post also needs its CSRF token. */
  const guarded = (handler: (c: Ctx, s: DashboardSession, form?: URLSearchParams) => Response | Promise<Response>) => async (c: Ctx) => {
    const session = sessionOf(c);
    if (!session) return c.redirect("/login", 303);
    if (c.req.method !== "POST") return handler(c, session);
    const form = await formOf(c);
    if (!sameSecret(form.get("csrf") ?? "", session.csrf))
      return c.html(v.page("Refused", "This form is stale or came from elsewhere; reload the page and try again."), 403);
    return handler(c, session, form);
  };

  app.get(
    "/events",
    guarded((c) => {
      const cookie = getCookie(c, SESSION_COOKIE);
      return liveEvents(c, d.core.store, () => d.sessions.get(cookie) !== undefined);
    }),
  );
  app.post(
    "/logout",
    guarded((c) => {
      d.sessions.end(getCookie(c, SESSION_COOKIE));
      deleteCookie(c, SESSION_COOKIE, { path: "/" });
      return c.redirect("/login", 303);
    }),
  );
  app.get(
    "/",
    guarded(async (c, s) => {
      const status = await d.core.status();
      const pending = d.core.store.approvals.pending();
      const body = html`${v.statusBody(status, usageCards(status))}<h3>Pending approvals</h3>${v.approvalsBlock(pending, s.csrf, zone())}`;
      return c.html(v.page("Status", body, { csrf: s.csrf, current: "/", live: pending.map((a) => a.id) }));
    }),
  );
  app.get(
    "/approvals",
    guarded((c, s) => {
      const notice = noticeOf(c, d.core, zone());
      const pending = d.core.store.approvals.pending();
      const body = html`${v.noticeBlock(notice?.text, notice?.good ?? true)}${v.approvalsBlock(pending, s.csrf, zone())}${v.decidedBlock(recent.decidedApprovals(20), zone())}`;
      return c.html(v.page("Approvals", body, { csrf: s.csrf, current: "/approvals", live: pending.map((a) => a.id) }));
    }),
  );
  app.post(
    "/approvals/:id",
    guarded((c, _s, form) => {
      const id = c.req.param("id") ?? "";
      const decision = form?.get("decision");
      if (decision !== "approve" && decision !== "deny") return c.html(v.page("Refused", "Choose Approve or Deny."), 400);
      const result = d.core.decide(id, decision === "approve", "dashboard");
      const code = result.ok ? "ok" : result.code;
      return c.redirect(`/approvals?id=${encodeURIComponent(id)}&result=${code}`, 303);
    }),
  );
  app.get(
    "/runs",
    guarded((c, s) => {
      const runs = recent.runs(30).map((run) => ({ run, calls: d.core.store.audit.ofRun(run.id) }));
      return c.html(v.page("Recent runs", v.runsBody(runs, zone()), { csrf: s.csrf, current: "/runs" }));
    }),
  );
  app.get(
    "/sessions",
    guarded((c, s) => {
      const { history, summaries } = d.core.store;
      const sessions = history.listSessions(SESSIONS_SHOWN).map((session) => ({ session, summary: summaries.latest(session.id) }));
      return c.html(v.page("Sessions", sessionsBody(sessions, zone()), { csrf: s.csrf, current: "/sessions" }));
    }),
  );
  app.get(
    "/audit",
    guarded((c, s) => {
      const q = c.req.query();
      const limit = Math.min(1000, Math.max(1, Number(q.limit) || 100));
      const rows = recent.audit({ session: q.session || undefined, tool: q.tool || undefined, decision: q.decision || undefined, limit });
      return c.html(v.page("Audit trail", v.auditBody(rows, q, zone()), { csrf: s.csrf, current: "/audit" }));
    }),
  );
  mountSearch(app, guarded, d.core);
  app.get(
    "/schedules",
    guarded((c, s) => {
      const hooks = d.cfg().hooks.map((h) => {
        const last = d.core.store.schedules.last(`hook:${h.name}`);
        return {
          name: h.name,
          deliver: h.deliver,
          min_interval_s: h.min_interval_s,
          last_status: last?.status ?? null,
          last_at: last?.fired_at ?? null,
        };
      });
      return c.html(
        v.page("Schedules", v.schedulesBody(d.core.scheduler()?.list(), hooks, zone()), { csrf: s.csrf, current: "/schedules" }),
      );
    }),
  );
}

/** What the approvals page says after a decision: made from the approval row, never from the query text. */
function noticeOf(c: Ctx, core: Core, zone: string): { text: string; good: boolean } | undefined {
  const id = c.req.query("id");
  const code = c.req.query("result") ?? "";
  if (!id || !RESULTS.has(code)) return undefined;
  const row = core.store.approvals.get(id);
  if (!row) return { text: "There is no such approval.", good: false };
  const decided = `${row.status} by ${row.decided_by ?? "nobody"} at ${v.timeText(row.decided_at, zone)}`;
  if (code === "ok") return { text: `${row.tool} ${row.args}: ${decided}.`, good: row.status === "approved" };
  if (row.status === "expired") return { text: `${row.tool}: this approval expired; the call did not run.`, good: false };
  return { text: `${row.tool}: already decided (${decided}); nothing changed.`, good: false };
}

async function formOf(c: Ctx): Promise<URLSearchParams> {
  const type = c.req.header("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) return new URLSearchParams();
  const text = await c.req.text();
  return new URLSearchParams(text.length > 65536 ? "" : text);
}
