/**
 * The dashboard in a real browser: Debian's chromium driven by playwright-core. Skipped, with a message
 * saying how to install it, where /usr/bin/chromium is absent (CI installs it in .ci/run).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import { browserForFile, hasChromium, loggedInPage } from "../../helpers/browser.js";
import { useHermes, useModel } from "../../helpers/fixture.js";
import { baseSettings, type Hermes, readDb } from "../../helpers/hermes.js";
import { baseUrlOf, HTTP_TOKEN, httpEnv, httpSettings } from "../../helpers/http.js";

/** Sends an `ask` over the CLI socket and leaves it running; resolves its `done` line. */
function askOverSocket(socketPath: string, text: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    let buffer = "";
    socket.setEncoding("utf8");
    socket.on("error", reject);
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
        buffer = buffer.slice(nl + 1);
        if (line.type === "done") {
          socket.end();
          resolve(line);
        }
      }
    });
    socket.write(`${JSON.stringify({ v: 1, id: "1", op: "ask", session: "browser", text })}\n`);
  });
}

describe.skipIf(!hasChromium("dashboard browser tests"))("the dashboard in chromium", () => {
  const browser = browserForFile();
  let model: FakeModel;
  let hermes: Hermes | undefined;
  const shots = mkdtempSync(join(tmpdir(), "hermes-dashboard-shots-"));

  afterAll(() => console.log(`dashboard screenshots: ${shots}`));
  beforeEach(async () => {
    model = await useModel();
  });

  it("logs in, approves a pending call once, shows the decision, and a second click says it was already decided", async () => {
    model.script(
      { toolCalls: [{ name: "write_file", arguments: { path: "hello.txt", content: "from the dashboard" } }] },
      { text: "Written." },
    );
    hermes = await useHermes(
      { ...baseSettings(model.url), connectors: { cron: { enabled: false }, http: httpSettings() } },
      { env: httpEnv },
    );
    const base = await baseUrlOf(hermes);
    await browser.context.clearCookies();
    const page = await browser.context.newPage();
    // The live stream connects only once the approval exists: the page, rendered without it, must still
    // notice it (an approval raised while the page was on its way must not be missed).
    let raised: () => void = () => {};
    const approvalRaised = new Promise<void>((resolve) => {
      raised = resolve;
    });
    await page.route("**/events", async (route) => {
      await approvalRaised;
      await route.continue();
    });

    await page.goto(`${base}/`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.fill('input[name="token"]', "wrong");
    await page.click("button:has-text('Log in')");
    expect(await (await page.waitForSelector("[role=alert]")).textContent()).toContain("not the token");
    await page.fill('input[name="token"]', HTTP_TOKEN);
    await Promise.all([page.waitForURL(`${base}/`), page.click("button:has-text('Log in')")]);
    const cookie = (await browser.context.cookies()).find((c) => c.name === "hermes_session");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict" });

    const done = askOverSocket(hermes.socketPath, "write hello.txt");
    await hermes.waitForLog((l) => l.msg === "run waiting for approval");
    raised();
    // No reload by the test: the page's live updates (SSE) bring the new approval in.
    await page.waitForSelector(".approval", { timeout: 10_000 });
    expect(await page.locator(".approval").count()).toBe(1);
    expect(await page.textContent(".approval")).toContain("write_file");
    await page.screenshot({ path: join(shots, "pending.png"), fullPage: true });
    const stale = await browser.context.newPage();
    await stale.goto(`${base}/approvals`);

    await Promise.all([page.waitForURL(/\/approvals\?/), page.click(".approval button.approve")]);
    expect(await page.textContent("[role=status]")).toMatch(/write_file .*hello\.txt.*: approved by dashboard at/);
    expect(await page.locator(".approval").count()).toBe(0);
    expect(await page.textContent("table")).toContain("approved");
    await page.screenshot({ path: join(shots, "approved.png"), fullPage: true });

    expect(await done).toMatchObject({ type: "done", reply: "Written.", stop_reason: "done" });
    expect(readFileSync(join(hermes.dir, "data", "files", "hello.txt"), "utf8")).toBe("from the dashboard");
    const calls = readDb(hermes.dbPath, (db) =>
      db.prepare("SELECT decision, decided_by, status FROM tool_calls WHERE tool = 'write_file'").all(),
    );
    expect(calls).toEqual([{ decision: "approved", decided_by: "dashboard", status: "ok" }]);

    await Promise.all([stale.waitForURL(/\/approvals\?/), stale.click(".approval button.approve")]);
    expect(await stale.textContent("[role=status]")).toMatch(/already decided \(approved by dashboard at .*\); nothing changed/);
    await stale.screenshot({ path: join(shots, "already-decided.png"), fullPage: true });
    expect(readDb(hermes.dbPath, (db) => db.prepare("SELECT COUNT(*) AS n FROM tool_calls WHERE status = 'ok'").get())).toEqual({ n: 1 });

    await page.goto(`${base}/runs`);
    expect(await page.textContent(".runs")).toContain("write hello.txt");
    await page.screenshot({ path: join(shots, "runs.png"), fullPage: true });
    await page.click(".run a[href^='/sessions']");
    expect(await page.textContent(".session")).toMatch(/cli:browser #1 · open · 4 message\(s\).*no summary yet/s);
    await page.screenshot({ path: join(shots, "sessions.png"), fullPage: true });
    // The fake model reported 100 prompt and 10 output tokens for each of the two calls.
    await page.goto(`${base}/`);
    expect(await page.textContent("#usage")).toMatch(/2 model calls · 200 prompt \+ 20 output tokens/);
    expect(await page.textContent("#serving")).toContain("Serving primary");
    await page.screenshot({ path: join(shots, "status.png"), fullPage: true });
    await page.goto(`${base}/audit?tool=write_file`);
    expect(await page.textContent("table")).toContain("hello.txt");
    await page.close();
  });

  it("refuses a form without the session's CSRF token and serves pages that browsers must not cache", async () => {
    hermes = await useHermes(
      { ...baseSettings(model.url), connectors: { cron: { enabled: false }, http: httpSettings() } },
      { env: httpEnv },
    );
    const base = await baseUrlOf(hermes);
    const page = await loggedInPage(browser.context, base);
    const res = await page.request.post(`${base}/logout`, { form: { csrf: "forged" } });
    expect(res.status()).toBe(403);
    const home = await page.goto(`${base}/`);
    expect(home?.headers()["cache-control"]).toBe("no-store");
    expect(new URL(page.url()).pathname).toBe("/");
    await Promise.all([page.waitForURL(`${base}/login`), page.click("text=Log out")]);
    await page.goto(`${base}/schedules`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.close();
  });
});
