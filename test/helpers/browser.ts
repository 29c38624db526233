/**
 * The dashboard in a real browser: Debian's chromium driven by playwright-core. Tests that need it are
 * skipped, with a message saying how to install it, where /usr/bin/chromium is absent (CI installs it).
 */
import { existsSync } from "node:fs";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { createTempDir } from "./hermes.js";
import { HTTP_TOKEN } from "./http.js";

export const CHROMIUM = "/usr/bin/chromium";

/** True when chromium is installed; otherwise says which tests are skipped and how to install it. */
export function hasChromium(what: string): boolean {
  const found = existsSync(CHROMIUM);
  if (!found) console.warn(`${what} skipped: ${CHROMIUM} is absent (apt-get install -y chromium)`);
  return found;
}

/** A headless chromium with a fresh profile for the tests of the calling describe; closed after them. */
export function browserForFile(): { readonly context: BrowserContext } {
  const profile = createTempDir("hermes-chromium-");
  const held = {} as { context: BrowserContext };
  beforeAll(async () => {
    // A fresh profile directory (playwright passes it as --user-data-dir).
    held.context = await chromium.launchPersistentContext(profile.path, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  });
  afterAll(async () => {
    await held.context?.close();
    profile.cleanup();
  });
  return held;
}

/** A new page logged in to the dashboard at `base` with the test token, through the login form. */
export async function loggedInPage(context: BrowserContext, base: string): Promise<Page> {
  await context.clearCookies();
  const page = await context.newPage();
  await page.goto(`${base}/login`);
  await page.fill('input[name="token"]', HTTP_TOKEN);
  await Promise.all([page.waitForURL(`${base}/`), page.click("button:has-text('Log in')")]);
  return page;
}
