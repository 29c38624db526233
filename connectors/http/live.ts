/**
 * Live updates for the dashboard, as an enhancement: the pages work without them. `/events` (SSE) says
 * which approvals are pending whenever that changes; `/dashboard.js` reloads the Status and Approvals
 * pages when one appears that the page was not rendered with (never when one goes away, so a page with
 * buttons stays put).
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { Store } from "../../src/store/store.js";

const LOOK_EVERY_MS = 1000;
const KEEPALIVE_EVERY = 15;

export const DASHBOARD_SCRIPT = `"use strict";
(() => {
  if (!document.body.hasAttribute("data-live") || !window.EventSource) return;
  // What the page was rendered with: an approval raised before the stream connected is new too.
  let known = document.body.dataset.live.split(" ").filter(Boolean);
  const events = new EventSource("/events");
  events.addEventListener("approvals", (e) => {
    const ids = JSON.parse(e.data).pending;
    if (ids.some((id) => !known.includes(id))) location.reload();
    known = ids;
  });
})();
`;

export function liveEvents(c: Context, store: Store, signedIn: () => boolean): Response {
  return streamSSE(c, async (stream) => {
    let last = "";
    // Ends with its session (a logout, its expiry, a changed token): the page then asks to log in again.
    for (let tick = 0; !stream.aborted && signedIn(); tick++) {
      const pending = store.approvals.pending().map((a) => a.id);
      const now = pending.join(",");
      if (now !== last || tick === 0) await stream.writeSSE({ event: "approvals", data: JSON.stringify({ pending }) });
      else if (tick % KEEPALIVE_EVERY === 0) await stream.write(": keep-alive\n\n");
      last = now;
      await stream.sleep(LOOK_EVERY_MS);
    }
  });
}
