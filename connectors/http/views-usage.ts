/** The Status page's usage and serving cards, and the Sessions page with each session's running summary. */
import { html } from "hono/html";
import type { DaemonStatus } from "../../src/connector.js";
import type { SessionListRow } from "../../src/store/history.js";
import type { SummaryRow } from "../../src/store/summaries.js";
import { type Html, timeText } from "./views.js";

/** Today's model calls and tokens, and which endpoint serves now: the figures `hermes status --json` reports. */
export function usageCards(s: DaemonStatus): Html {
  const u = s.usage_today;
  const serving = s.serving;
  const estimated = u && u.estimated_calls > 0 ? Math.round((100 * u.estimated_calls) / u.calls) : 0;
  return html`${
    u
      ? html`<div class="card" id="usage"><h3>Today</h3>
    <p><span class="calls-today">${u.calls}</span> model calls · <span class="prompt-tokens">${u.prompt_tokens}</span> prompt + <span class="output-tokens">${u.output_tokens}</span> output tokens</p>
    <p class="hint">${u.estimated_calls ? `${u.estimated_calls} of ${u.calls} calls (${estimated} %) estimated: the endpoint reported no tokens` : "tokens as the endpoints reported them"}</p>
    ${u.daily_limits.map((l) => html`<p class="limit${l.used >= l.daily_tokens ? " bad" : ""}"><code>${l.endpoint}</code> ${l.model}: ${l.used} of ${l.daily_tokens} daily tokens</p>`)}</div>`
      : ""
  }${
    serving
      ? html`<div class="card" id="serving"><h3>Serving ${serving.primary ? html`<span class="ok">primary</span>` : html`<span class="bad">fallback</span>`}</h3>
    <p><code>${serving.model}</code> at <code>${serving.endpoint}</code></p>${serving.primary ? "" : html`<p class="hint reason">${serving.reason}</p>`}</div>`
      : ""
  }`;
}

export interface SessionView {
  session: SessionListRow;
  summary: SummaryRow | undefined;
}

/** The newest sessions, each with its running summary (what older turns were folded into) where it has one. */
export function sessionsBody(sessions: SessionView[], zone: string): Html {
  if (!sessions.length) return html`<p class="empty">No sessions yet.</p>`;
  return html`<ol class="runs">${sessions.map(
    ({ session: s, summary }) => html`<li class="run session" id="session-${s.id}">
      <div><strong>${s.key}</strong> #${s.id} · ${s.closed_at ? `closed ${timeText(s.closed_at, zone)}` : "open"} · ${s.messages} message(s) · last ${timeText(s.last_at, zone)} · <a href="/audit?session=${encodeURIComponent(s.key)}">tool calls</a></div>
      ${
        summary
          ? html`<div class="hint">summary of ${summary.turns} turn(s), messages #${summary.from_message_id}&ndash;#${summary.to_message_id}, made ${timeText(summary.created_at, zone)}</div>
      <div class="summary">${summary.summary}</div>`
          : html`<div class="hint">no summary yet (nothing had to be left out of a prompt)</div>`
      }
    </li>`,
  )}</ol>`;
}
