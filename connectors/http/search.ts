/** The dashboard's Search page: the recall index, as the owner (every session), newest first. */
import type { HttpBindings } from "@hono/node-server";
import type { Context } from "hono";
import { html } from "hono/html";
import type { Core } from "../../src/connector.js";
import type { RecallHit } from "../../src/store/recall.js";
import { MATCH_END, MATCH_START } from "../../src/store/recall-text.js";
import type { App } from "./api.js";
import type { DashboardSession } from "./auth.js";
import { type Html, page, timeText } from "./views.js";

type Ctx = Context<{ Bindings: HttpBindings }>;
type Guard = (handler: (c: Ctx, s: DashboardSession) => Response | Promise<Response>) => (c: Ctx) => Promise<Response>;

const SHOWN = 50;

export function mountSearch(app: App, guarded: Guard, core: Core): void {
  app.get(
    "/search",
    guarded((c, s) => {
      const q = (c.req.query("q") ?? "").slice(0, 1000);
      const session = c.req.query("session") || undefined;
      const hits = q.trim()
        ? core.store.recall.search({ query: q, scope: { all: true }, limit: SHOWN, ...(session ? { session } : {}) })
        : undefined;
      return c.html(page("Search", searchBody(q, session, hits, core.config().timezone), { csrf: s.csrf, current: "/search" }));
    }),
  );
}

function searchBody(q: string, session: string | undefined, hits: RecallHit[] | undefined, zone: string): Html {
  const form = html`<form method="get" action="/search" class="filters" role="search">
    <label>words <input type="search" name="q" value="${q}" placeholder="plumber" autofocus></label>
    <label>session <input name="session" value="${session ?? ""}" placeholder="telegram:123"></label>
    <button>Search</button></form>`;
  if (!hits)
    return html`${form}<p class="hint">Every stored conversation, newest first. Accents do not matter; the last word may be the start of one.</p>`;
  if (!hits.length) return html`${form}<p class="empty">No message matches.</p>`;
  return html`${form}<ol class="runs hits">${hits.map(
    (h) => html`<li class="run hit">
      <div><a href="/sessions#session-${h.session_id}"><strong>${h.session_key}</strong></a> · ${timeText(h.created_at, zone)} · ${h.speaker}</div>
      <div class="snippet">${marked(h.snippet)}</div></li>`,
  )}</ol>`;
}

/** The snippet with its matches in `<mark>`: every piece escaped by the html tag. */
function marked(snippet: string): Html {
  const parts = snippet.split(MATCH_START).map((part, i) => {
    if (i === 0) return html`${part}`;
    const [match = "", rest = ""] = part.split(MATCH_END);
    return html`<mark>${match}</mark>${rest}`;
  });
  return html`${parts}`;
}
