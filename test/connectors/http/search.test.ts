/**
 * The dashboard's search box in a real browser (Debian's chromium through playwright-core); skipped, with a
 * message, where /usr/bin/chromium is absent, as the other dashboard browser tests are.
 */
import { describe, expect, it } from "vitest";
import { browserForFile, hasChromium, loggedInPage } from "../../helpers/browser.js";
import { useHermes, useModel } from "../../helpers/fixture.js";
import { baseSettings } from "../../helpers/hermes.js";
import { baseUrlOf, httpEnv, httpSettings } from "../../helpers/http.js";

describe.skipIf(!hasChromium("dashboard search browser test"))("the dashboard's search box in chromium", () => {
  const browser = browserForFile();

  it("finds a past message by a word without its accent, shows its session, time and speaker, the match marked and markup as text", async () => {
    const model = await useModel();
    const hermes = await useHermes(
      { ...baseSettings(model.url), connectors: { cron: { enabled: false }, http: httpSettings() } },
      { env: httpEnv },
    );
    model.script({ text: "Noted." }, { text: "Noted too." });
    await hermes.ask("The plumber from Café Müller comes Tuesday <b>bold</b>", "--session", "house");
    await hermes.ask("Buy seeds", "--session", "garden");
    const base = await baseUrlOf(hermes);
    const page = await loggedInPage(browser.context, base);

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
