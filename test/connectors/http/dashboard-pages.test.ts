/** The dashboard's Status and Sessions pages over HTTP with a session cookie: usage, serving endpoint, running summaries. */
import { beforeEach, describe, expect, it } from "vitest";
import { FAKE_SUMMARY, type FakeModel, type RecordedRequest } from "../../fakes/model-server.js";
import { useHermes, useModel } from "../../helpers/fixture.js";
import { baseSettings } from "../../helpers/hermes.js";
import { baseUrlOf, HTTP_TOKEN, httpEnv, httpSettings } from "../../helpers/http.js";

/** Logs in with the token as the login form does; resolves the session cookie. */
async function login(base: string): Promise<string> {
  const res = await fetch(`${base}/login`, {
    method: "POST",
    body: new URLSearchParams({ token: HTTP_TOKEN }),
    redirect: "manual",
  });
  expect(res.status).toBe(303);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith("hermes_session="));
  return (cookie ?? "").split(";")[0] as string;
}

const number = (page: string, cls: string) => Number(new RegExp(`<span class="${cls}">(\\d+)</span>`).exec(page)?.[1]);

describe("the dashboard's usage and summaries", () => {
  let primary: FakeModel;
  let fallback: FakeModel;

  beforeEach(async () => {
    primary = await useModel();
    fallback = await useModel();
    fallback.models = ["small-model"];
  });

  it("shows today's usage as the model reported it, the fallback serving and why, and a session's escaped running summary", async () => {
    let answered = 0;
    primary.respond(() => (answered++ === 0 ? { text: "Hello Ada.", promptTokens: 80, outputTokens: 30 } : { status: 503 }));
    fallback.respond(() => ({ text: "Tea it is.", promptTokens: 40, outputTokens: 5 }));
    const settings = baseSettings(primary.url);
    const model = {
      ...(settings.model as object),
      retries: 0,
      daily_tokens: 1000,
      retry_primary_after_s: 3600,
      fallbacks: [{ provider: "openai", base_url: fallback.openaiUrl, name: "small-model", retries: 0, context_tokens: 8192 }],
    };
    const hermes = await useHermes(
      { ...settings, model, connectors: { cron: { enabled: false }, http: httpSettings() } },
      { env: httpEnv },
    );
    const base = await baseUrlOf(hermes);

    // The primary answers the first turn, then fails: the second turn and the summary are served by the fallback.
    const chat = await hermes.cli(["chat", "--session", "c"], {
      input: "my name is <b>Ada</b> & I like tea\nwhat do I like?\n/compact\n/exit\n",
    });
    expect(chat.code).toBe(0);
    expect(chat.stdout).toContain("compacted 1 turn(s) into the summary");
    expect(primary.requests).toHaveLength(2);
    expect(fallback.requests.filter((r) => r.compaction)).toHaveLength(1);

    // What the fake endpoints reported: the scripted tokens (none for the 503), the default 100 + 10 for the summary request.
    const calls = [
      ...primary.requests.map((_, i) => (i === 0 ? [80, 30] : [0, 0])),
      ...fallback.requests.map((r: RecordedRequest) => (r.compaction ? [100, 10] : [40, 5])),
    ];
    const prompt = calls.reduce((sum, [p]) => sum + (p as number), 0);
    const output = calls.reduce((sum, [, o]) => sum + (o as number), 0);

    const cookie = await login(base);
    const res = await fetch(`${base}/`, { headers: { cookie } });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect([number(page, "calls-today"), number(page, "prompt-tokens"), number(page, "output-tokens")]).toEqual([
      calls.length,
      prompt,
      output,
    ]);
    expect(page).toContain("tokens as the endpoints reported them");
    expect(page).toContain(`<code>${primary.url}</code> hermes3:8b: 110 of 1000 daily tokens`);
    expect(page).toMatch(/Serving <span class="bad">fallback<\/span>/);
    expect(page).toContain(`<code>small-model</code> at <code>${fallback.openaiUrl}</code>`);

    // The same figures as `hermes status --json`.
    const status = JSON.parse((await hermes.cli(["status", "--json"])).stdout) as {
      usage_today: { calls: number; prompt_tokens: number; output_tokens: number };
      serving: { primary: boolean; endpoint: string; reason: string };
    };
    expect(status.usage_today).toMatchObject({ calls: calls.length, prompt_tokens: prompt, output_tokens: output });
    expect(status.serving).toMatchObject({ primary: false, endpoint: fallback.openaiUrl });
    expect(status.serving.reason).toMatch(/answered HTTP 503/);
    expect(page).toContain(`<p class="hint reason">${status.serving.reason}</p>`);

    const sessions = await (await fetch(`${base}/sessions`, { headers: { cookie } })).text();
    expect(sessions).toContain("<strong>cli:c</strong> #1");
    expect(sessions).toContain("summary of 1 turn(s), messages #1&ndash;#2");
    expect(sessions).toContain(`<div class="summary">${FAKE_SUMMARY} my name is &lt;b&gt;Ada&lt;/b&gt; &amp; I like tea</div>`);
    expect(sessions).not.toContain("<b>Ada</b>");
    const runs = await (await fetch(`${base}/runs`, { headers: { cookie } })).text();
    expect(runs).toContain('<a href="/sessions#session-1"><strong>cli:c</strong></a>');

    // Without the cookie the pages are not shown.
    const anonymous = await fetch(`${base}/sessions`, { redirect: "manual" });
    expect([anonymous.status, anonymous.headers.get("location")]).toEqual([303, "/login"]);
  }, 60_000);

  it("says which calls' tokens are estimates and shows a session without a summary as such", async () => {
    primary.respond(() => ({ text: "hi", noUsage: true }));
    const hermes = await useHermes(
      { ...baseSettings(primary.url), connectors: { cron: { enabled: false }, http: httpSettings() } },
      { env: httpEnv },
    );
    const base = await baseUrlOf(hermes);
    expect((await hermes.ask("hello")).code).toBe(0);
    const cookie = await login(base);
    const page = await (await fetch(`${base}/`, { headers: { cookie } })).text();
    expect(number(page, "calls-today")).toBe(1);
    expect(page).toContain("1 of 1 calls (100 %) estimated: the endpoint reported no tokens");
    expect(page).toMatch(/Serving <span class="ok">primary<\/span>/);
    expect(page).not.toContain("daily tokens");
    const sessions = await (await fetch(`${base}/sessions`, { headers: { cookie } })).text();
    expect(sessions).toContain("<strong>cli:default</strong>");
    expect(sessions).toContain("no summary yet (nothing had to be left out of a prompt)");
  }, 30_000);
});

describe("the dashboard's live stream", () => {
  it("ends when its session ends: a logout closes the /events stream the page had open", async () => {
    const model = await useModel();
    const hermes = await useHermes(
      { ...baseSettings(model.url), connectors: { cron: { enabled: false }, http: httpSettings() } },
      { env: httpEnv },
    );
    const base = await baseUrlOf(hermes);
    const cookie = await login(base);
    const events = await fetch(`${base}/events`, { headers: { cookie } });
    expect(events.status).toBe(200);
    const reader = (events.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("event: approvals");
    const page = await (await fetch(`${base}/`, { headers: { cookie } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
    const out = await fetch(`${base}/logout`, {
      method: "POST",
      headers: { cookie },
      body: new URLSearchParams({ csrf }),
      redirect: "manual",
    });
    expect(out.status).toBe(303);
    // The stream looks at its session once a second; it ends instead of sending on.
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
    }
  });
});
