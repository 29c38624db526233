/**
 * The dashboard's search box in a real browser (Debian's chromium through playwright-core); skipped, with a
 * message, where /usr/bin/chromium is absent, as the other dashboard browser tests are.
 */
import { existsSync } from "node:fs";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, createTempDir, type Hermes } from "../helpers/hermes.js";
import { baseUrlOf, HTTP_TOKEN, httpEnv, httpSettings } from "../helpers/http.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`dashboard search browser test skipped: ${CHROMIUM} is absent (apt-get install -y chromium)`);

describe.skipIf(!hasChromium)("the dashboard's search box in chromium", () => {
  let context: BrowserContext;
  let model: FakeModel | undefined;
  let hermes: Hermes | undefined;
  const profile = createTempDir("hermes-chromium-");

  beforeAll(async () => {
    context = await chromium.launchPersistentContext(profile.path, {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
    });
  });
  afterAll(async () => {
    await context?.close();
    profile.cleanup();
  });

  it("finds a past message by a word without its accent, shows its session, time and speaker, the match marked and markup as text", async () => {
    model = await useModel();
    hermes = await useHermes(
      { ...baseSettings(model.url), connectors: { cron: { enabled: false }, http: httpSettings() } },
      { env: httpEnv },
    );
    model.script({ text: "Noted." }, { text: "Noted too." });
    await hermes.ask("The plumber from Café Müller comes Tuesday <b>bold</b>", "--session", "house");
    await hermes.ask("Buy seeds", "--session", "garden");
    const base = await baseUrlOf(hermes);
    await context.clearCookies();
    const page = await context.newPage();
    await page.goto(`${base}/login`);
    await page.fill('input[name="token"]', HTTP_TOKEN);
    await Promise.all([page.waitForURL(`${base}/`), page.click("button:has-text('Log in')")]);

    await Promise.all([page.waitForURL(`${base}/search`), page.click("nav a:has-text('Search')")]);
    await page.fill('input[name="q"]', "cafe plumb");
    await Promise.all([page.waitForURL(/\/search\?q=cafe\+plumb/), page.press('input[name="q"]', "Enter")]);
    const hits = page.locator(".hit");
    expect(await hits.count()).toBe(1);
    const head = await hits.first().locator("div").first().textContent();
    expect(head).toMatch(/^cli:house · \d+ \w{3} \d{4}, \d\d:\d\d:\d\d · the owner$/);
    expect(await hits.first().locator("mark").allTextContents()).toEqual(["plumber", "Café"]);
    expect(await hits.first().locator(".snippet").textContent()).toBe("The plumber from Café Müller comes Tuesday <b>bold</b>");
    expect(await hits.first().locator(".snippet b").count()).toBe(0);

    await page.fill('input[name="q"]', "nothing-like-this");
    await Promise.all([page.waitForURL(/q=nothing/), page.press('input[name="q"]', "Enter")]);
    expect(await page.textContent(".empty")).toBe("No message matches.");
  });
});
