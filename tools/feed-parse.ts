import { XMLParser } from "fast-xml-parser";
import { convert } from "html-to-text";
import { ToolError } from "../src/errors.js";

export interface Headline {
  title: string;
  link?: string;
  date?: Date;
  source: string;
}

/** Parsed XML is untyped: its shape is checked field by field below. */
// biome-ignore lint/suspicious/noExplicitAny: see above
type Xml = any;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  textNodeName: "#text",
  processEntities: true,
  htmlEntities: true,
  parseTagValue: false,
});

/**
 * The text of a feed's bytes: a byte-order mark wins, then the HTTP charset, then the XML declaration, else
 * UTF-8 (RFC 7303). TextDecoder (Node's full ICU) covers ISO-8859-1, windows-125x, KOI8-R and the rest.
 */
export function decodeFeed(bytes: Uint8Array, contentType = ""): string {
  const bom =
    bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
      ? "utf-8"
      : bytes[0] === 0xfe && bytes[1] === 0xff
        ? "utf-16be"
        : bytes[0] === 0xff && bytes[1] === 0xfe
          ? "utf-16le"
          : undefined;
  const http = contentType.match(/charset\s*=\s*"?([\w.:-]+)/i)?.[1];
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 200));
  const declared = head.match(/^\s*<\?xml[^>]*encoding\s*=\s*["']([\w.:-]+)["']/)?.[1];
  for (const label of [bom, http, declared, "utf-8"]) {
    if (!label) continue;
    try {
      return new TextDecoder(label).decode(bytes);
    } catch {
      // an unknown label: try the next source
    }
  }
  return new TextDecoder().decode(bytes);
}

/** RSS 2.0, RSS 1.0 (RDF) and Atom; links resolved against xml:base and the feed's own URL. */
export function parseFeed(xml: string, feedUrl: string): Headline[] {
  let doc: Record<string, Xml>;
  try {
    doc = parser.parse(xml) as Record<string, Xml>;
  } catch (err) {
    throw new ToolError(`the feed is not valid XML: ${(err as Error).message}`);
  }
  const fallback = new URL(feedUrl).hostname;
  if (doc.feed) return atomEntries(doc.feed, feedUrl, fallback);
  const channel = doc.rss?.channel ?? doc["rdf:RDF"]?.channel;
  const items = doc.rss?.channel?.item ?? doc["rdf:RDF"]?.item;
  if (!channel && !items) throw new ToolError("that is not an RSS or Atom feed");
  const source = title(channel?.title) || fallback;
  const base = resolve(channel?.["@xml:base"], feedUrl) ?? feedUrl;
  return list(items).map((i: Xml) => ({
    title: title(i.title),
    link: resolve(text(i.link) || undefined, resolve(i["@xml:base"], base) ?? base),
    date: when(i.pubDate ?? i["dc:date"] ?? i["atom:published"] ?? i["atom:updated"] ?? i["dc:modified"]),
    source,
  }));
}

function atomEntries(feed: Xml, feedUrl: string, fallback: string): Headline[] {
  const source = title(feed.title) || fallback;
  const base = resolve(feed["@xml:base"], feedUrl) ?? feedUrl;
  return list(feed.entry).map((e: Xml) => {
    const entryBase = resolve(e["@xml:base"], base) ?? base;
    const link = list(e.link).find((l: Xml) => !l["@rel"] || l["@rel"] === "alternate");
    const linkBase = resolve(link?.["@xml:base"], entryBase) ?? entryBase;
    return {
      title: title(e.title),
      link: resolve(link?.["@href"], linkBase),
      date: when(e.published ?? e.issued) ?? when(e.updated ?? e.modified),
      source,
    };
  });
}

function list(v: unknown): Xml[] {
  return Array.isArray(v) ? v : v === undefined ? [] : [v];
}

/** All the character data under a node (an XHTML title is a tree). */
function text(v: Xml): string {
  if (v === undefined || v === null) return "";
  if (typeof v !== "object") return String(v).trim();
  if (Array.isArray(v)) return v.map(text).join(" ").trim();
  return Object.entries(v)
    .filter(([k]) => !k.startsWith("@"))
    .map(([, child]) => text(child))
    .join(" ")
    .replace(/\s+/g, " ")
    .trim();
}

/** Titles are text: entities left after XML (often escaped twice, or inside CDATA) are decoded, HTML stripped. */
function title(v: Xml): string {
  const raw = text(v);
  const type = typeof v === "object" ? v?.["@type"] : undefined;
  if (type === "text" || !/[<&]/.test(raw)) return raw.replace(/\s+/g, " ");
  return convert(raw, {
    wordwrap: false,
    selectors: [
      { selector: "a", options: { ignoreHref: true } },
      { selector: "img", format: "skip" },
    ],
  })
    .replace(/\s+/g, " ")
    .trim();
}

function when(v: Xml): Date | undefined {
  const s = text(v);
  if (!s) return undefined;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

function resolve(href: Xml, base: string): string | undefined {
  const s = typeof href === "string" ? href.trim() : text(href);
  if (!s) return undefined;
  try {
    return new URL(s, base).toString();
  } catch {
    return undefined;
  }
}
