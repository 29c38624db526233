import type { ToolName } from "../src/config/schema.js";
import { z } from "../src/config/zod.js";
import { ToolError } from "../src/errors.js";
import { defineTool } from "../src/tools/define.js";
import type { ToolDeps } from "../src/tools/types.js";
import { localDay } from "./calendar-expand.js";
import { decodeFeed, type Headline, parseFeed } from "./feed-parse.js";
import type { Resolver } from "./net.js";

/** The network code (and ipaddr.js), loaded by the first call: a start does not pay for it. */
const net = () => import("./net.js");

export type { Headline } from "./feed-parse.js";
export { parseFeed } from "./feed-parse.js";

/**
 * Latest headlines from RSS or Atom feeds: the owner's list, or one URL. A given URL is fetched with
 * http_get's checks: one that leads to a private address needs the owner's yes (unless allowed).
 */
export function createTool(_name: ToolName, deps: ToolDeps, resolve?: Resolver) {
  const s = deps.config.tools.feeds;
  const allow = deps.config.tools.http_get.allow;
  const timeoutMs = (s.timeout_s ?? 15) * 1000;
  const zone = deps.config.timezone;
  return defineTool({
    name: "feeds",
    description:
      'Latest news headlines from the owner\'s feeds, or from one RSS/Atom feed URL. Example: {} or {"url": "https://example.com/rss", "count": 5}.',
    input: z.strictObject({ url: z.url({ protocol: /^https?$/ }).optional(), count: z.int().min(1).max(30).optional() }),
    readOnly: true,
    needsConfirmation: async ({ url }) => (url ? (await net()).needsPrivateConsent(url, allow, resolve) : false),
    run: async ({ url, count }, ctx) => {
      const urls = url ? [url] : s.urls;
      if (urls.length === 0) throw new ToolError('no feeds configured: add URLs to tools.feeds.urls, or pass {"url": "..."}');
      const { safeGet, fetchConfiguredBytes } = await net();
      // As in http_get: only the owner's yes to this call lets a given URL reach a private address. The
      // check answered for one lookup; a name that turns private after it must not pass unasked.
      const consented = url && ctx.approved ? new Set([new URL(url).hostname]) : new Set<string>();
      const lists = await Promise.allSettled(
        urls.map(async (u) => {
          const page = url
            ? await safeGet(u, { maxBytes: 2_000_000, timeoutMs, signal: ctx.signal, allow, consented, resolve })
            : await fetchConfiguredBytes(u, { signal: ctx.signal, timeoutMs, maxBytes: 2_000_000, allow, resolve });
          return parseFeed(decodeFeed(page.body, page.contentType), u);
        }),
      );
      const failed = lists.flatMap((l, i) =>
        l.status === "rejected" ? [`${new URL(urls[i] as string).host}: ${(l.reason as Error).message}`] : [],
      );
      if (failed.length === urls.length) throw new ToolError(failed.join("; "));
      const headlines = newestFirst(lists.flatMap((l) => (l.status === "fulfilled" ? l.value : []))).slice(0, count ?? 10);
      const lines = headlines.map((h) => formatHeadline(h, zone));
      if (lines.length === 0) lines.push("No headlines.");
      if (failed.length > 0) lines.push(`Could not read: ${failed.join("; ")}.`);
      return lines.join("\n");
    },
  });
}

/** Dated items newest first; undated ones after them, in the order the feeds gave. */
function newestFirst(items: Headline[]): Headline[] {
  return [...items].sort((a, b) => (b.date?.getTime() ?? Number.NEGATIVE_INFINITY) - (a.date?.getTime() ?? Number.NEGATIVE_INFINITY) || 0);
}

function formatHeadline(h: Headline, zone: string): string {
  const day = h.date ? localDay(h.date, zone) : "";
  return `• ${h.title || "(no title)"} — ${h.source}${day ? ` (${day})` : ""}${h.link ? `\n  ${h.link}` : ""}`;
}
