import { once } from "node:events";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema, type ToolName } from "../../src/config/schema.js";
import { openStore } from "../../src/store/store.js";
import { loadTools } from "../../src/tools/registry.js";
import type { AnyTool } from "../../src/tools/types.js";
import { createTempDir } from "../helpers/hermes.js";

const ICS = `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VTIMEZONE
TZID:Europe/Berlin
BEGIN:STANDARD
DTSTART:19701025T030000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
TZNAME:CET
END:STANDARD
BEGIN:DAYLIGHT
DTSTART:19700329T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
TZNAME:CEST
END:DAYLIGHT
END:VTIMEZONE
BEGIN:VEVENT
UID:standup@test
DTSTART;TZID=Europe/Berlin:20261102T093000
DTEND;TZID=Europe/Berlin:20261102T094500
RRULE:FREQ=WEEKLY;BYDAY=MO,WE
SUMMARY:Standup
LOCATION:Room 1
END:VEVENT
BEGIN:VEVENT
UID:standup@test
RECURRENCE-ID;TZID=Europe/Berlin:20261202T093000
DTSTART;TZID=Europe/Berlin:20261202T110000
DTEND;TZID=Europe/Berlin:20261202T111500
SUMMARY:Standup (moved)
END:VEVENT
BEGIN:VEVENT
UID:dentist@test
DTSTART;TZID=Europe/Berlin:20261201T160000
DTEND;TZID=Europe/Berlin:20261201T170000
SUMMARY:Dentist
END:VEVENT
BEGIN:VEVENT
UID:holiday@test
DTSTART;VALUE=DATE:20261203
DTEND;VALUE=DATE:20261204
SUMMARY:Day off
END:VEVENT
END:VCALENDAR
`;

const RSS = `<?xml version="1.0"?><rss version="2.0"><channel><title>Local News</title>
<item><title>Old story</title><link>https://news.example/1</link><pubDate>Sat, 28 Nov 2026 08:00:00 GMT</pubDate></item>
<item><title>Bridge reopens &amp; traffic flows</title><link>https://news.example/2</link><pubDate>Sun, 29 Nov 2026 08:00:00 GMT</pubDate></item>
</channel></rss>`;

const ATOM = `<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Tech Blog</title>
<entry><title>New release</title><link href="https://blog.example/release"/><updated>2026-11-29T10:00:00Z</updated></entry>
</feed>`;

const PAGE = `<!doctype html><html><head><title>T</title><style>.x{}</style><script>alert(1)</script></head>
<body><nav>menu</nav><h1>Opening hours</h1><p>Open <b>daily</b> 9–17.</p><a href="https://zoo.example/tickets">Tickets</a>
<h2>iPhone 15 Pro</h2><table><tr><th>Model</th><th>SKU</th></tr><tr><td>iPhone 15 Pro</td><td>MTUx3ZD/a</td></tr></table></body></html>`;

function serve(handler: RequestListener, host = "127.0.0.1"): Promise<{ server: Server; url: string }> {
  const server = createServer(handler).listen(0, host);
  return once(server, "listening").then(() => ({ server, url: `http://${host}:${(server.address() as AddressInfo).port}` }));
}

describe("the toolbox against local fixture servers", () => {
  const dir = createTempDir();
  const store = openStore(":memory:");
  let fixtures: { server: Server; url: string };
  let hidden: { server: Server; url: string };
  let tools: Map<string, AnyTool>;
  const ctx = (approved = false) => ({
    signal: new AbortController().signal,
    sessionKey: "cli:t",
    channel: "cli:t",
    runId: "r",
    callId: "c",
    approved,
  });
  /** Runs a tool as the gate does; `approved` says the owner said yes to this call. */
  const call = async (name: string, args: unknown, approved = false) => {
    const tool = tools.get(name) as AnyTool;
    return tool.run(tool.input.parse(args), ctx(approved));
  };

  const fixtureHandler: RequestListener = (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const json = (body: unknown) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(body));
    };
    switch (url.pathname) {
      case "/v1/search":
        return url.searchParams.get("name") === "Hamburg"
          ? json({ results: [{ name: "Hamburg", country: "Germany", latitude: 53.55, longitude: 9.99 }] })
          : json({});
      case "/v1/forecast":
        return json({
          current: { temperature_2m: 3.4, weather_code: 3, wind_speed_10m: 12.2 },
          daily: {
            time: ["2026-11-29", "2026-11-30", "2026-12-01"],
            weather_code: [61, 0, 71],
            temperature_2m_max: [5.2, 7, 1],
            temperature_2m_min: [1.1, 2, -3],
            precipitation_probability_max: [80, 5, 40],
          },
        });
      case "/search":
        return json({
          results: [
            { title: "Berlin Zoo", url: "https://zoo.example", content: "Opening   hours and tickets" },
            { title: "Second", url: "https://b.example" },
          ],
        });
      case "/rss":
        res.setHeader("content-type", "application/rss+xml");
        return res.end(RSS);
      case "/atom":
        return res.end(ATOM);
      case "/page":
        res.setHeader("content-type", "text/html; charset=utf-8");
        return res.end(PAGE);
      case "/huge":
        res.setHeader("content-type", "text/plain");
        return res.end("x".repeat(50_000));
      case "/redirect-inside":
        res.writeHead(302, { location: `${hidden.url}/admin` });
        return res.end();
      default:
        res.statusCode = 404;
        return res.end("nope");
    }
  };

  beforeAll(async () => {
    hidden = await serve((_req, res) => res.end("internal admin page"), "127.0.0.3");
    fixtures = await serve(fixtureHandler, "127.0.0.2");
    writeFileSync(join(dir.path, "cal.ics"), ICS);
    mkdirSync(join(dir.path, "files"));
    writeFileSync(join(dir.path, "files", "big.txt"), "y".repeat(5000));
    symlinkSync("/etc", join(dir.path, "files", "etc-link"));
    const config = configSchema().parse({
      timezone: "Europe/Berlin",
      tools: {
        files: { root: join(dir.path, "files"), max_bytes: 1000 },
        shell: { timeout_s: 0.5 },
        http_get: { allow: ["127.0.0.2"], max_bytes: 10_000 },
        weather: { base_url: fixtures.url, geocoding_url: fixtures.url, location: "Hamburg" },
        calendar: { sources: [join(dir.path, "cal.ics")] },
        feeds: { urls: [`${fixtures.url}/rss`, `${fixtures.url}/atom`] },
        web_search: { url: fixtures.url },
      },
    });
    const names: ToolName[] = [
      "read_file",
      "list_files",
      "write_file",
      "shell",
      "http_get",
      "weather",
      "calendar",
      "feeds",
      "web_search",
      "send_message",
    ];
    ({ tools } = await loadTools(names, { config, store, now: () => new Date("2026-11-29T17:00:00Z") }));
  });
  afterAll(() => {
    fixtures.server.close();
    hidden.server.close();
    store.close();
    dir.cleanup();
  });

  it("weather: geocodes a place and answers compactly for now, today, tomorrow and the next days", async () => {
    expect(await call("weather", {})).toBe(
      [
        "Hamburg, Germany now: 3°C, overcast, wind 12 km/h",
        "Today: 1–5°C, light rain, rain 80%",
        "Tomorrow: 2–7°C, clear, rain 5%",
        "Tue 1 Dec: -3–1°C, light snow, rain 40%",
      ].join("\n"),
    );
    await expect(call("weather", { place: "Atlantis" })).rejects.toThrow(/no place called "Atlantis"/);
  });

  it("calendar: expands a recurring event with its exception, in the configured zone", async () => {
    const week = await call("calendar", { from: "2026-11-30", days: 4 });
    expect(week).toBe(
      [
        "Mon 30 Nov 09:30–09:45 Standup @ Room 1",
        "Tue 1 Dec 16:00–17:00 Dentist",
        "Wed 2 Dec 11:00–11:15 Standup (moved)",
        "Thu 3 Dec (all day) Day off",
      ].join("\n"),
    );
    expect(await call("calendar", { from: "2026-12-05", days: 1 })).toMatch(/^No events between Sat 5 Dec and Sat 5 Dec\.$/);
    // A day that does not exist is refused, not read as another (2026-02-30 as 2 March).
    await expect(call("calendar", { from: "2026-02-30" })).rejects.toThrow(/no such day/);
    expect(await call("calendar", { from: "2028-02-29" })).toMatch(/^No events between Tue 29 Feb and Tue 29 Feb\.$/);
  });

  it("feeds: merges RSS and Atom headlines, newest first", async () => {
    expect(await call("feeds", { count: 3 })).toBe(
      [
        "• New release — Tech Blog (2026-11-29)\n  https://blog.example/release",
        "• Bridge reopens & traffic flows — Local News (2026-11-29)\n  https://news.example/2",
        "• Old story — Local News (2026-11-28)\n  https://news.example/1",
      ].join("\n"),
    );
  });

  it("feeds: a given URL of a private host is read only with the owner's yes to that call", async () => {
    await expect(call("feeds", { url: `${hidden.url}/rss` })).rejects.toThrow(/127\.0\.0\.3 is a private address/);
    // With the yes the host is reached: what it answers is no feed, which is the only complaint left.
    await expect(call("feeds", { url: `${hidden.url}/rss` }, true)).rejects.toThrow(/^127\.0\.0\.3:\d+: that is not an RSS or Atom feed$/);
  });

  it("web_search: reads SearXNG's JSON API", async () => {
    expect(await call("web_search", { query: "zoo", count: 2 })).toBe(
      "1. Berlin Zoo — https://zoo.example\n   Opening hours and tickets\n2. Second — https://b.example",
    );
  });

  it("http_get: turns HTML into text and cuts an oversized response with a marker", async () => {
    const page = await call("http_get", { url: `${fixtures.url}/page` });
    expect(page).toContain("Opening hours");
    expect(page).toContain("iPhone 15 Pro");
    expect(page).toMatch(/Model\s*SKU/);
    expect(page).toContain("MTUx3ZD/a");
    expect(page).not.toMatch(/OPENING|IPHONE|MODEL/);
    expect(page).toContain("Open daily 9–17.");
    expect(page).toContain("Tickets [https://zoo.example/tickets]");
    expect(page).not.toContain("alert(1)");
    const huge = await call("http_get", { url: `${fixtures.url}/huge` });
    expect(huge).toMatch(/\[… page cut at 10000 bytes of 50000 …\]$/);
  });

  it("http_get: asks before reaching loopback or private hosts, by address, by name, and refuses a redirect into them", async () => {
    const tool = tools.get("http_get") as AnyTool;
    const needs = (url: string) => (tool.needsConfirmation as (a: unknown) => Promise<boolean>)({ url });
    expect(await needs(`${hidden.url}/admin`)).toBe(true);
    expect(await needs(`http://localhost:${new URL(hidden.url).port}/admin`)).toBe(true);
    expect(await needs("http://10.1.2.3/")).toBe(true);
    expect(await needs("http://[::1]:80/")).toBe(true);
    // IPv4 written as IPv6 in its every form: mapped, compatible (::/96, deprecated), NAT64, 6to4.
    for (const host of ["[::ffff:127.0.0.1]", "[::127.0.0.1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::]"])
      expect(await needs(`http://${host}/`), host).toBe(true);
    expect(await needs(`${fixtures.url}/page`)).toBe(false);
    await expect(call("http_get", { url: `${fixtures.url}/redirect-inside` })).rejects.toThrow(
      /127\.0\.0\.3 is a private address; call http_get with this URL directly/,
    );
    await expect(call("http_get", { url: `${hidden.url}/admin` })).rejects.toThrow(/127\.0\.0\.3 is a private address/);
    expect(await call("http_get", { url: `${hidden.url}/admin` }, true)).toContain("internal admin page");
  });

  it("files: refuse .., absolute paths and symlink escapes; cut an oversized file", async () => {
    await expect(call("read_file", { path: "../cal.ics" })).rejects.toThrow(/contains '\.\.'/);
    await expect(call("read_file", { path: "/etc/passwd" })).rejects.toThrow(/is absolute/);
    await expect(call("read_file", { path: "etc-link/passwd" })).rejects.toThrow(
      /goes through the link .etc-link.; the file tools do not follow links/,
    );
    await expect(call("write_file", { path: "etc-link/evil", content: "x" })).rejects.toThrow(
      /goes through the link .etc-link.; the file tools do not follow links/,
    );
    expect(await call("read_file", { path: "big.txt" })).toMatch(/\[… file cut: showed 1000 of 5000 bytes\]$/);
    expect(await call("write_file", { path: "notes/todo.txt", content: "milk" })).toBe("Wrote 4 bytes to notes/todo.txt.");
    expect(await call("list_files", {})).toMatch(/big\.txt \(5000 bytes\)\netc-link \(link\)\nnotes\//);
    // Cut in the middle of a character of several bytes: the character is left out, not shown as U+FFFD.
    writeFileSync(join(dir.path, "files", "umlauts.txt"), `${"a".repeat(999)}${"ä".repeat(100)}`);
    const cut = await call("read_file", { path: "umlauts.txt" });
    expect(cut).not.toContain("\uFFFD");
    expect(cut).toMatch(/^a{999}\n\[… file cut: showed 999 of 1199 bytes\]$/);
  });

  it("shell: always asks first, times out cleanly, and returns the exit code and output", async () => {
    expect(tools.get("shell")?.needsConfirmation).toBe(true);
    expect(tools.get("send_message")?.needsConfirmation).toBe(true);
    const started = Date.now();
    expect(await call("shell", { command: "echo start; sleep 5; echo never" })).toBe("timed out after 0.5 s (killed)\nstart");
    expect(Date.now() - started).toBeLessThan(4000);
    expect(await call("shell", { command: "echo oops >&2; exit 3" })).toBe("exit code 3\noops");
  });
});
