// The feeds tool against real-world feeds (test/fixtures/feeds, sources in its README), served over HTTP on
// loopback with the content types such feeds are served with. Expected titles, links and order were worked
// out by hand from the files.
process.env.TZ = "UTC";

import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/schema.js";
import { openStore } from "../../src/store/store.js";
import { loadTools } from "../../src/tools/registry.js";
import type { AnyTool } from "../../src/tools/types.js";

const DIR = join(import.meta.dirname, "../fixtures/feeds");
const ROUTES: Record<string, [file: string, contentType: string]> = {
  "/jn": ["iso-8859-1-declared-jn.rss", "application/rss+xml"],
  "/uol": ["latin1-http-charset-uol.rss", "text/xml; charset=ISO-8859-1"],
  "/koi8": ["koi8r-http-charset.xml", "application/rss+xml; charset=KOI8-R"],
  "/craigslist": ["entities-cdata-craigslist.rdf", "application/rdf+xml"],
  "/giantbomb": ["entities-podcast-giantbomb.rss", "application/rss+xml; charset=utf-8"],
  "/gulpjs/gulp/releases.atom": ["relative-links-github.atom", "application/atom+xml; charset=utf-8"],
  "/fp/item": ["relative-item-link.rss", "application/rss+xml"],
  "/fp/entry": ["relative-entry-link.atom", "application/atom+xml"],
  "/heise": ["order-published-heise.atom", "application/atom+xml"],
  "/heraldsun": ["undated-rss092.rss", "text/xml"],
};

// Two small documents written here rather than found: no public windows-1251 feed with a known licence
// turned up, and no corpus file puts xml:base on an entry link.
const CP1251 = Buffer.concat([
  Buffer.from('<?xml version="1.0" encoding="windows-1251"?><rss version="2.0"><channel><title>'),
  Buffer.from([0xcd, 0xee, 0xe2, 0xee, 0xf1, 0xf2, 0xe8]), // "Новости" in windows-1251
  Buffer.from("</title><item><title>"),
  Buffer.from([0xc3, 0xe0, 0xf0, 0xe0, 0xed, 0xf2]), // "Гарант"
  Buffer.from("</title><link>/n/1</link></item></channel></rss>"),
]);
const XML_BASE = `<feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://example.org/blog/"><title>Base</title>
<entry xml:base="2026/"><title>A</title><link href="post.html"/></entry>
<entry><title>B</title><link xml:base="/other/" href="b.html"/></entry></feed>`;

let server: Server;
let base: string;
const store = openStore(":memory:");
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/cp1251") return void res.writeHead(200, { "content-type": "text/xml" }).end(CP1251);
    if (req.url === "/xml-base") return void res.writeHead(200, { "content-type": "application/atom+xml" }).end(XML_BASE);
    const route = ROUTES[req.url ?? ""];
    if (!route) {
      res.writeHead(404).end("nope");
      return;
    }
    res.setHeader("content-type", route[1]);
    res.end(readFileSync(join(DIR, route[0])));
  }).listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
  store.close();
});

async function feeds(zone: string, paths: string[]): Promise<string[]> {
  const config = configSchema().parse({ timezone: zone, tools: { feeds: { urls: paths.map((p) => base + p) } } });
  const { tools } = await loadTools(["feeds"], { config, store, now: () => new Date("2026-12-01T12:00:00Z") });
  const tool = tools.get("feeds") as AnyTool;
  const ctx = { signal: new AbortController().signal, sessionKey: "cli:t", channel: "cli:t", runId: "r", callId: "c" };
  return (await tool.run(tool.input.parse({ count: 30 }), ctx)).split("\n");
}
const headlines = (lines: string[]) => lines.filter((l) => l.startsWith("• "));
const links = (lines: string[]) => lines.filter((l) => l.startsWith("  ")).map((l) => l.trim());

describe("declared encodings are honoured", () => {
  it("an ISO-8859-1 declaration (jn.pt), newest first by pubDate", async () => {
    expect(headlines(await feeds("Europe/Berlin", ["/jn"]))).toEqual([
      "• Reações dos partidos ao veto de Marcelo — Jornal de Notícias - Últimas Notícias (2018-01-03)", // 13:48Z
      "• Mãe de utente é a nova presidente da Raríssimas — Jornal de Notícias - Últimas Notícias (2018-01-03)", // 13:47Z, first in the file
      "• Tempestade Eleanor atinge França, Alemanha, Suíça e Reino Unido — Jornal de Notícias - Últimas Notícias (2018-01-03)",
      "• Gabinete Antifraude Europeu avalia conduta de português ex-embaixador da UE — Jornal de Notícias - Últimas Notícias (2018-01-03)",
    ]);
  });

  it("the HTTP charset when the file declares nothing (UOL, Latin-1; its Portuguese dates are not read, so the order stays)", async () => {
    expect(headlines(await feeds("America/New_York", ["/uol"]))).toEqual([
      "• Ibope: Bolsonaro perde de Haddad, Ciro e Alckmin em simulações de 2º turno — UOL Noticias",
      "• Promotoria abre inquérito para apurar suspeita de improbidade de Skaf no Sebrae-SP — UOL Noticias",
      "• Apucarana garante continuidade do Pré Aprendiz; ano vai fechar com 13 mil pessoas qualificadas — UOL Noticias",
    ]);
  });

  it("a windows-1251 declaration", async () => {
    const lines = await feeds("Europe/Berlin", ["/cp1251"]);
    expect(headlines(lines)).toEqual(["• Гарант — Новости"]);
    expect(links(lines)).toEqual([`${base}/n/1`]);
  });

  it("a KOI8-R charset", async () => {
    expect(headlines(await feeds("Europe/Berlin", ["/koi8"]))).toEqual(["• Как пережить новогоднюю ночь — 127.0.0.1"]);
  });
});

describe("titles are text", () => {
  it("numeric entities and HTML inside CDATA (craigslist)", async () => {
    expect(headlines(await feeds("America/New_York", ["/craigslist"]))).toEqual([
      "• Bright, Spacious Beautiful Victorian (oakland north / temescal) $4300 3bd 1930ft2 — craigslist SF bay area | apts/housing for rent search (2017-06-21)",
      "• Beautifully Remodeled 1 BR with Garage Parking (Pacific Heights) $3449 — craigslist SF bay area | apts/housing for rent search (2017-06-21)",
      "• CALL FALI Z~ MOVE NOW ~ GREAT PLACE TO CALL HOME!!! (vallejo / benicia) $1413 1bd 643ft2 — craigslist SF bay area | apts/housing for rent search (2017-06-21)",
    ]);
  });

  it("&#039; in a podcast feed; the day is the owner's (14:13 PST is already the next day in Berlin)", async () => {
    const berlin = headlines(await feeds("Europe/Berlin", ["/giantbomb"]));
    expect(berlin[0]).toBe("• Giant Bombcast 595: It's Always the Cute Monks — Giant Bombcast (2019-08-07)");
    expect(berlin[1]).toBe("• Giant Bombcast 582: It's 4:20 Somewhere! — Giant Bombcast (2019-05-08)");
    expect(berlin[2]).toMatch(/^• Giant Bombcast 571: It's Like a Big Slider — Giant Bombcast/);
    const ny = headlines(await feeds("America/New_York", ["/giantbomb"]));
    expect(ny[0]).toBe("• Giant Bombcast 595: It's Always the Cute Monks — Giant Bombcast (2019-08-06)");
  });
});

describe("relative links are resolved against the feed's URL", () => {
  it("GitHub release notes", async () => {
    const lines = await feeds("America/New_York", ["/gulpjs/gulp/releases.atom"]);
    expect(links(lines)).toEqual(["v3.9.0", "v3.8.11", "v3.8.10", "v3.8.9"].map((v) => `${base}/gulpjs/gulp/releases/tag/${v}`));
    // published is missing, so updated orders them; 2014-11-04T01:11:30+01:00 is still 3 Nov in New York
    expect(headlines(lines)).toEqual([
      "• v3.9.0 — Release notes from gulp (2015-06-01)",
      "• v3.8.11 — Release notes from gulp (2015-02-09)",
      "• v3.8.10 — Release notes from gulp (2014-11-03)",
      "• v3.8.9 — Release notes from gulp (2014-10-22)",
    ]);
  });

  it("xml:base on the feed, an entry and a link", async () => {
    expect(links(await feeds("Europe/Berlin", ["/xml-base"]))).toEqual([
      "http://example.org/blog/2026/post.html",
      "http://example.org/other/b.html",
    ]);
  });

  it("an RSS item link and an Atom entry link", async () => {
    expect(links(await feeds("Europe/Berlin", ["/fp/item"]))).toEqual([`${base}/relative/uri`]);
    expect(links(await feeds("Europe/Berlin", ["/fp/entry"]))).toEqual([`${base}/relative/link`]);
  });
});

describe("order", () => {
  it("by published, not updated (heise: three entries were updated after later ones were published)", async () => {
    const titles = headlines(await feeds("Europe/Berlin", ["/heise"])).map((l) => l.replace(/^• (.*) — .*$/, "$1"));
    expect(titles.slice(6)).toEqual([
      "Developer Snapshots: Programmierer-News in ein, zwei Sätzen", // published 15:37
      "Der Dotnet-Doktor: Auslesen und Sortieren von GPX-Dateien", // published 13:59, updated 13:59
      "SourceForge und Slashdot wechseln erneut den Besitzer", // published 13:02, updated 14:24
    ]);
  });

  it("undated items follow the dated ones in their own order, and a feed that fails is named", async () => {
    const lines = await feeds("Europe/Berlin", ["/heraldsun", "/missing", "/jn"]);
    expect(headlines(lines).map((l) => l.replace(/ — .*$/, ""))).toEqual([
      "• Reações dos partidos ao veto de Marcelo",
      "• Mãe de utente é a nova presidente da Raríssimas",
      "• Tempestade Eleanor atinge França, Alemanha, Suíça e Reino Unido",
      "• Gabinete Antifraude Europeu avalia conduta de português ex-embaixador da UE",
      "• The First Item",
      "• The Second Item",
    ]);
    expect(lines.at(-1)).toMatch(/^Could not read: 127\.0\.0\.1:\d+: 127\.0\.0\.1:\d+ answered HTTP 404\.$/);
  });
});
