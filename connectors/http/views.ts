/** The dashboard's HTML: server-rendered with hono's `html` tag, which escapes every interpolated value. */
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { DaemonStatus, ScheduleInfo } from "../../src/connector.js";
import { shownArgs, shownText } from "../../src/gate/shown-args.js";
import type { ApprovalRow } from "../../src/store/approvals.js";
import type { AuditRow } from "../../src/store/audit.js";
import type { RecentRun } from "../../src/store/recent.js";
import { dateFormat } from "../../src/time.js";

export type Html = HtmlEscapedString | Promise<HtmlEscapedString> | string;

const NAV = [
  ["/", "Status"],
  ["/approvals", "Approvals"],
  ["/runs", "Runs"],
  ["/sessions", "Sessions"],
  ["/audit", "Audit"],
  ["/schedules", "Schedules"],
  ["/search", "Search"],
] as const;

export function timeText(ms: number | null | undefined, zone: string): string {
  if (!ms) return "–";
  return dateFormat("en-GB", { timeZone: zone, dateStyle: "medium", timeStyle: "medium" }).format(new Date(ms));
}

const cut = (s: string | null | undefined, n: number) => (!s ? "" : s.length > n ? `${s.slice(0, n)}…` : s);

/** A pending call's arguments (stored as JSON) whole, a run of whitespace shown as one space: the owner approves what the page shows. */
function pendingArgs(json: string): string {
  try {
    return shownArgs(JSON.parse(json), undefined, Number.POSITIVE_INFINITY);
  } catch {
    return shownText(json, Number.POSITIVE_INFINITY);
  }
}

/**
 * A dashboard page. `live` lists the pending approvals the page shows: the page then reloads by itself
 * when another one appears, also one that appeared while it was on its way to the browser.
 */
export function page(title: string, body: Html, o: { csrf?: string; current?: string; live?: string[] } = {}): Html {
  const nav = o.csrf
    ? html`<nav>${NAV.map(([href, label]) => html`<a href="${href}"${href === o.current ? html` aria-current="page"` : ""}>${label}</a>`)}
        <form method="post" action="/logout" class="logout"><input type="hidden" name="csrf" value="${o.csrf}"><button>Log out</button></form></nav>`
    : "";
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · hermes</title><link rel="stylesheet" href="/style.css">${o.live ? html`<script src="/dashboard.js" defer></script>` : ""}</head>
<body${o.live ? html` data-live="${o.live.join(" ")}"` : ""}><header><h1>hermes</h1>${nav}</header><main><h2>${title}</h2>${body}</main></body></html>`;
}

export function loginPage(error?: string): Html {
  return page(
    "Log in",
    html`${error ? html`<p class="notice bad" role="alert">${error}</p>` : ""}
    <form method="post" action="/login" class="login">
      <label>Token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
      <button>Log in</button>
    </form>
    <p class="hint">The token is <code>connectors.http.token</code> (usually <code>HERMES_HTTP_TOKEN</code> in the environment).</p>`,
  );
}

const ok = (good: boolean | null) => (good ? html`<span class="ok">ok</span>` : html`<span class="bad">down</span>`);

/** `cards`: more cards after the built-in ones (today's usage and the serving endpoint). */
export function statusBody(s: DaemonStatus, cards: Html = ""): Html {
  return html`<section class="cards">
    <div class="card"><h3>hermes ${s.version}</h3><p>up ${Math.round(s.uptime_s / 60)} min · pid ${s.pid} · ${s.memory.rss_mb} MB RSS</p></div>
    <div class="card"><h3>Model ${ok(s.model.reachable)}</h3><p>${s.model.provider} <code>${s.model.name}</code></p><p class="hint">${s.model.detail}</p></div>
    <div class="card"><h3>Runs</h3><p>${s.runs.running} running · ${s.runs.queued} queued · ${s.runs.suspended} waiting</p><p><a href="/approvals">${s.pending_approvals} approval(s) pending</a></p></div>
    ${cards}
  </section>
  <h3>Connectors</h3>
  <table><thead><tr><th>connector</th><th>state</th><th>detail</th></tr></thead><tbody>
  ${s.connectors.map((c) => html`<tr><td>${c.name}</td><td>${ok(c.ok)}</td><td>${c.detail}</td></tr>`)}
  </tbody></table>`;
}

export function approvalsBlock(pending: ApprovalRow[], csrf: string, zone: string): Html {
  if (!pending.length) return html`<p class="empty">No approvals pending.</p>`;
  return html`<ul class="approvals">${pending.map(
    (a) => html`<li class="approval" id="approval-${a.id}">
      <div><strong>${a.tool}</strong> <code>${pendingArgs(a.args)}</code></div>
      <div class="hint">${a.reason} · session ${a.session_key} · asked ${timeText(a.created_at, zone)} · denied if nobody answers by ${timeText(a.expires_at, zone)}</div>
      <form method="post" action="/approvals/${a.id}">
        <input type="hidden" name="csrf" value="${csrf}">
        <button name="decision" value="approve" class="approve">Approve</button>
        <button name="decision" value="deny" class="deny">Deny</button>
      </form></li>`,
  )}</ul>`;
}

export function decidedBlock(decided: ApprovalRow[], zone: string): Html {
  if (!decided.length) return "";
  return html`<h3>Decided</h3><table><thead><tr><th>when</th><th>tool</th><th>arguments</th><th>decision</th><th>by</th></tr></thead><tbody>
  ${decided.map(
    (a) =>
      html`<tr id="decided-${a.id}"><td>${timeText(a.decided_at, zone)}</td><td>${a.tool}</td><td><code>${cut(a.args, 200)}</code></td><td class="${a.status}">${a.status}</td><td>${a.decided_by ?? ""}</td></tr>`,
  )}</tbody></table>`;
}

export function noticeBlock(text: string | undefined, good: boolean): Html {
  return text ? html`<p class="notice ${good ? "good" : "bad"}" role="status">${text}</p>` : "";
}

export function runsBody(runs: { run: RecentRun; calls: AuditRow[] }[], zone: string): Html {
  if (!runs.length) return html`<p class="empty">No runs yet.</p>`;
  return html`<ol class="runs">${runs.map(
    ({ run, calls }) => html`<li class="run">
      <div><a href="/sessions#session-${run.session_id}"><strong>${run.session_key}</strong></a> · ${run.source} · ${timeText(run.started_at, zone)} · <span class="${run.status}">${run.stop_reason ?? run.status}</span> · ${run.steps} step(s)</div>
      <div class="asked">${cut(run.asked?.split("\n\n(Current time:")[0], 300)}</div>
      ${calls.length ? html`<ul class="calls">${calls.map((c) => html`<li>${callLine(c)}</li>`)}</ul>` : ""}
      ${run.reply ? html`<div class="reply">${cut(run.reply, 500)}</div>` : ""}
    </li>`,
  )}</ol>`;
}

function callLine(c: AuditRow): Html {
  return html`<code>${c.tool}</code> <code>${cut(c.args, 200)}</code> · <span class="${c.decision}">${c.decision}</span>${c.decided_by ? ` by ${c.decided_by}` : ""} · ${c.status}${c.duration_ms !== null ? ` in ${c.duration_ms} ms` : ""}${c.summary ? html` · ${cut(c.summary, 160)}` : ""}`;
}

const DECISIONS = ["", "auto", "approved", "denied", "expired", "blocked", "pending"];

export function auditBody(rows: (AuditRow & { session_key: string })[], f: Record<string, string>, zone: string): Html {
  return html`<form method="get" action="/audit" class="filters">
    <label>session <input name="session" value="${f.session ?? ""}" placeholder="telegram:123"></label>
    <label>tool <input name="tool" value="${f.tool ?? ""}" placeholder="shell"></label>
    <label>decision <select name="decision">${DECISIONS.map((d) => html`<option value="${d}"${d === (f.decision ?? "") ? html` selected` : ""}>${d || "any"}</option>`)}</select></label>
    <label>limit <input name="limit" type="number" min="1" max="1000" value="${f.limit ?? "100"}"></label>
    <button>Filter</button></form>
  ${
    rows.length
      ? html`<table><thead><tr><th>time</th><th>session</th><th>tool</th><th>arguments</th><th>decision</th><th>status</th><th>ms</th><th>result</th></tr></thead><tbody>
  ${rows.map(
    (r) =>
      html`<tr><td>${timeText(r.created_at, zone)}</td><td>${r.session_key}</td><td>${r.tool}</td><td><code>${cut(r.args, 200)}</code></td><td class="${r.decision}">${r.decision}${r.decided_by ? ` (${r.decided_by})` : ""}</td><td>${r.status}</td><td>${r.duration_ms ?? ""}</td><td>${cut(r.summary ?? r.error ?? "", 160)}</td></tr>`,
  )}</tbody></table>`
      : html`<p class="empty">No tool calls match.</p>`
  }`;
}

export interface HookInfo {
  name: string;
  deliver: string;
  min_interval_s: number;
  last_status: string | null;
  last_at: number | null;
}

export function schedulesBody(schedules: ScheduleInfo[] | undefined, hooks: HookInfo[], zone: string): Html {
  return html`<h3>Jobs and reminders</h3>
  ${
    !schedules
      ? html`<p class="empty">The cron connector is off.</p>`
      : schedules.length
        ? html`<table><thead><tr><th>name</th><th>schedule</th><th>deliver</th><th>next</th><th>last firing</th></tr></thead><tbody>
    ${schedules.map(
      (s) =>
        html`<tr><td>${s.name}</td><td><code>${s.schedule}</code> ${s.timezone}</td><td>${s.deliver}</td><td>${s.next_local}</td><td>${s.last_status ? html`<span class="${s.last_status}">${s.last_status}</span> ${timeText(s.last_slot ? Date.parse(s.last_slot) : null, zone)}` : "never"}</td></tr>`,
    )}</tbody></table>`
        : html`<p class="empty">No jobs or reminders.</p>`
  }
  <h3>Webhooks</h3>
  ${
    hooks.length
      ? html`<table><thead><tr><th>hook</th><th>deliver</th><th>min interval</th><th>last run</th></tr></thead><tbody>
    ${hooks.map(
      (h) =>
        html`<tr><td><code>POST /v1/hooks/${h.name}</code></td><td>${h.deliver}</td><td>${h.min_interval_s} s</td><td>${h.last_status ? html`<span class="${h.last_status}">${h.last_status}</span> ${timeText(h.last_at, zone)}` : "never"}</td></tr>`,
    )}</tbody></table>`
      : html`<p class="empty">No webhooks configured.</p>`
  }`;
}
