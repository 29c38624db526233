/**
 * DNS rebinding against http_get and a feed URL the model gives, with a resolver the test controls: a name
 * that answers a public address to the approval check and 127.0.0.1 to everything after it must not reach
 * the loopback service.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/schema.js";
import { openStore } from "../../src/store/store.js";
import type { AnyTool } from "../../src/tools/types.js";
import { createTool as createFeeds } from "../../tools/feeds.js";
import { createTool } from "../../tools/http-get.js";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { baseSettings } from "../helpers/hermes.js";
import { startInProcess } from "../helpers/in-process.js";

const PUBLIC = "93.184.216.34";
const SECRET_FEED = `<?xml version="1.0"?><rss version="2.0"><channel><title>router</title>
<item><title>secret loopback page</title><link>http://router.lan/</link></item></channel></rss>`;

/** Answers each name from a script: the n-th lookup of a name gets the n-th answer (the last one repeats). */
function scriptedResolver(script: Record<string, string[][]>) {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    if (/^[\d.]+$/.test(host)) return [host];
    const answers = script[host] ?? [];
    const n = asked.filter((h) => h === host).length - 1;
    return answers[Math.min(n, answers.length - 1)] ?? [];
  };
  return { resolve, asked };
}

describe("http_get, feeds and DNS rebinding", () => {
  let model: FakeModel;
  let loopback: Server;
  let allowed: Server;
  let port: number;
  let allowedPort: number;
  let hermes: Awaited<ReturnType<typeof startInProcess>> | undefined;
  const store = openStore(":memory:");

  beforeEach(async () => {
    model = await startFakeModel();
    model.respond((req) => ({
      text: `Result: ${req.messages
        .filter((m) => m.role === "tool")
        .map((m) => m.content)
        .join(" | ")}`,
    }));
    loopback = createServer((req, res) => {
      if (req.url === "/feed.xml") res.writeHead(200, { "content-type": "application/rss+xml" }).end(SECRET_FEED);
      else res.end("secret loopback page");
    }).listen(0, "127.0.0.1");
    allowed = createServer((req, res) => {
      if (req.url === "/hop") {
        res.writeHead(302, { location: `http://rebind.test:${port}/secret` });
        res.end();
      } else res.end("allowed page");
    }).listen(0, "127.0.0.2");
    await Promise.all([once(loopback, "listening"), once(allowed, "listening")]);
    port = (loopback.address() as AddressInfo).port;
    allowedPort = (allowed.address() as AddressInfo).port;
  });
  afterEach(async () => {
    await hermes?.close();
    hermes = undefined;
    loopback.close();
    allowed.close();
    await model.close();
  });

  const start = async (resolve: (host: string) => Promise<string[]>, name: "http_get" | "feeds" = "http_get") => {
    const config = configSchema().parse({ timezone: "Europe/Berlin", tools: { http_get: { allow: ["127.0.0.2"] } } });
    const deps = { config, store, now: () => new Date() };
    const tool = (name === "feeds" ? createFeeds(name, deps, resolve) : createTool(name, deps, resolve)) as AnyTool;
    hermes = await startInProcess({ ...baseSettings(model.url), tools: { enabled: ["clock", name] } }, [tool]);
    return hermes;
  };

  it("a name that turns private after the check is refused, and nothing is read from loopback", async () => {
    const dns = scriptedResolver({ "rebind.test": [[PUBLIC], ["127.0.0.1"]] });
    const h = await start(dns.resolve);
    model.script({ toolCalls: [{ name: "http_get", arguments: { url: `http://rebind.test:${port}/secret` } }] });
    const { reply } = await h.ask("fetch it");
    expect(reply).not.toContain("secret loopback page");
    expect(reply).toMatch(/rebind\.test resolves to the private address 127\.0\.0\.1; call http_get with this URL directly/);
    expect(dns.asked.filter((n) => n === "rebind.test").length).toBe(2);
  });

  it("a redirect to such a name is refused too", async () => {
    const dns = scriptedResolver({ "ok.test": [["127.0.0.2"]], "rebind.test": [["127.0.0.1"]] });
    const h = await start(dns.resolve);
    model.script({ toolCalls: [{ name: "http_get", arguments: { url: `http://ok.test:${allowedPort}/hop` } }] });
    const { reply } = await h.ask("fetch it");
    expect(reply).not.toContain("secret loopback page");
    expect(reply).toMatch(/rebind\.test resolves to the private address 127\.0\.0\.1/);
  });

  it("connects to the address that was checked, without asking the system resolver again", async () => {
    // ok.test exists only in the test's resolver: the page can be read only through the bound answer.
    const dns = scriptedResolver({ "ok.test": [["127.0.0.2"]] });
    const h = await start(dns.resolve);
    model.script({ toolCalls: [{ name: "http_get", arguments: { url: `http://ok.test:${allowedPort}/` } }] });
    expect((await h.ask("fetch it")).reply).toContain("allowed page");
  });

  it("a feed URL whose name turns private after the check is refused as well: no yes, no consent", async () => {
    const dns = scriptedResolver({ "rebind.test": [[PUBLIC], ["127.0.0.1"]] });
    const h = await start(dns.resolve, "feeds");
    model.script({ toolCalls: [{ name: "feeds", arguments: { url: `http://rebind.test:${port}/feed.xml` } }] });
    const { reply } = await h.ask("what's new on that feed?");
    expect(reply).not.toContain("secret loopback page");
    expect(reply).toMatch(/rebind\.test resolves to the private address 127\.0\.0\.1/);
    expect(dns.asked.filter((n) => n === "rebind.test").length).toBe(2);
  });
});
