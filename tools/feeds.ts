import { XMLParser } from "fast-xml-parser";
import { z } from "zod";
import type { ToolName } from "../src/config/schema.js";
import { ToolError } from "../src/errors.js";
import { defineTool } from "../src/tools/define.js";
import type { ToolDeps } from "../src/tools/types.js";
import { fetchConfigured, needsPrivateConsent, safeGet } from "./net.js";

export interface Headline {
  title: string;
  link?: string;
  date?: Date;
  source: string;
}

/** Latest headlines from RSS or Atom feeds: the owner's list, or one URL. */
export function createTool(_name: ToolName, deps: ToolDeps) {
  const s = deps.config.tools.feeds;
  const allow = deps.config.tools.http_get.allow;
  const timeoutMs = (s.timeout_s ?? 15) * 1000;
  return defineTool({
    name: "feeds",
    description:
      'Latest news headlines from the owner\'s feeds, or from one RSS/Atom feed URL. Example: {} or {"url": "https://example.com/rss", "count": 5}.',
    input: z.strictObject({ url: z.url({ protocol: /^https?$/ }).optional(), count: z.int().min(1).max(30).optional() }),
    readOnly: true,
    needsConfirmation: ({ url }) => (url ? needsPrivateConsent(url, allow) : false),
    run: async ({ url, count }, ctx) => {
      const urls = url ? [url] : s.urls;
      if (urls.length === 0) throw new ToolError('no feeds configured: add URLs to tools.feeds.urls, or pass {"url": "..."}');
      const lists = await Promise.all(
        urls.map(async (u) => {
          const xml = url
            ? (
                await safeGet(u, { maxBytes: 2_000_000, timeoutMs, signal: ctx.signal, allow, consented: new Set([new URL(u).hostname]) })
              ).body.toString("utf8")
            : await fetchConfigured(u, { signal: ctx.signal, timeoutMs, maxBytes: 2_000_000 });
          return parseFeed(xml, new URL(u).hostname);
        }),
      );
      const headlines = lists
        .flat()
        .sort((a, b) => (b.date?.getTime() ?? 0) - (a.date?.getTime() ?? 0))
        .slice(0, count ?? 10);
      if (headlines.length === 0) return "No headlines.";
      return headlines
        .map((h) => `• ${h.title} — ${h.source}${h.date ? ` (${h.date.toISOString().slice(0, 10)})` : ""}${h.link ? `\n  ${h.link}` : ""}`)
        .join("\n");
    },
  });
}

/** Parsed XML is untyped: its shape is checked field by field below. */
// biome-ignore lint/suspicious/noExplicitAny: see above
type Xml = any;

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@", textNodeName: "#text", processEntities: true });

/** RSS 2.0, RSS 1.0 (RDF) and Atom. */
export function parseFeed(xml: string, fallbackSource: string): Headline[] {
  let doc: Record<string, Xml>;
  try {
    doc = parser.parse(xml) as Record<string, Xml>;
  } catch (err) {
    throw new ToolError(`the feed is not valid XML: ${(err as Error).message}`);
  }
  const list = (v: unknown) => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
  const text = (v: Xml): string => (typeof v === "string" ? v : typeof v === "number" ? String(v) : (v?.["#text"] ?? "")).toString().trim();
  const when = (v: unknown) => {
    const d = v ? new Date(text(v)) : undefined;
    return d && !Number.isNaN(d.getTime()) ? d : undefined;
  };
  if (doc.feed) {
    const source = text(doc.feed.title) || fallbackSource;
    return list(doc.feed.entry).map((e: Xml) => {
      const link = list(e.link).find((l: Xml) => !l["@rel"] || l["@rel"] === "alternate");
      return { title: text(e.title), link: link?.["@href"], date: when(e.updated ?? e.published), source };
    });
  }
  const channel = doc.rss?.channel ?? doc["rdf:RDF"]?.channel;
  const items = doc.rss?.channel?.item ?? doc["rdf:RDF"]?.item;
  if (!channel && !items) throw new ToolError("that is not an RSS or Atom feed");
  const source = text(channel?.title) || fallbackSource;
  return list(items).map((i: Xml) => ({
    title: text(i.title),
    link: text(i.link) || undefined,
    date: when(i.pubDate ?? i["dc:date"]),
    source,
  }));
}
