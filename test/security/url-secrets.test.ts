import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/store.js";
import { maskUrl, maskUrlsInText, urlSecrets } from "../../src/url-secrets.js";
import { baseSettings, createTempDir, runCli, startHermes } from "../helpers/hermes.js";

describe("secrets inside URLs", () => {
  it("finds a userinfo password and credential-named query values, and masks only those", () => {
    const url = "https://me:hunter2pw@api.example.org/v1?api_key=sk-abc123&lang=en&access_token=t0k3n";
    expect(urlSecrets(url).sort()).toEqual(["hunter2pw", "sk-abc123", "t0k3n"]);
    const masked = maskUrl(url);
    expect(masked).not.toMatch(/hunter2pw|sk-abc123|t0k3n/);
    expect(masked).toContain("me:********@api.example.org/v1");
    expect(masked).toContain("lang=en");
    expect(maskUrl("http://127.0.0.1:11434")).toBe("http://127.0.0.1:11434");
    expect(maskUrl("not a url ?token=x")).toBe("not a url ?token=x");
  });

  it("hermes config check prints the URLs with their secrets masked", async () => {
    const dir = createTempDir();
    try {
      const path = join(dir.path, "hermes.yaml");
      writeFileSync(
        path,
        [
          "model:",
          "  provider: openai",
          "  base_url: https://hermes:pa55word-in-url@llm.example.org/v1",
          "tools:",
          "  enabled: [clock, weather]",
          "  weather: { base_url: 'https://weather.example.org/v1?apikey=wx-secret-42&units=metric' }",
          "",
        ].join("\n"),
      );
      const check = await runCli(["config", "check", "--config", path]);
      expect(check.code).toBe(0);
      expect(check.stdout).not.toMatch(/pa55word-in-url|wx-secret-42/);
      expect(check.stdout).toContain("https://hermes:********@llm.example.org/v1");
      expect(check.stdout).toMatch(/apikey=\*{8}&units=metric/);
    } finally {
      dir.cleanup();
    }
  });

  it("masks the URLs inside a message, and leaves the rest of it as it was", () => {
    const text = "the model endpoint http://u:pw-in-text@10.0.0.2:8000/v1?api_key=sk-in-text (OpenAI-compatible) failed: x";
    expect(maskUrlsInText(text)).toBe(
      "the model endpoint http://u:********@10.0.0.2:8000/v1?api_key=******** (OpenAI-compatible) failed: x",
    );
    expect(maskUrlsInText("no URL here, token=abc")).toBe("no URL here, token=abc");
  });

  it("an endpoint's key or password in its URL is in no reply, status or doctor line when the endpoint fails", async () => {
    // Port 9 (discard) is closed here: both endpoints fail at once, and their errors name them.
    const settings = {
      ...baseSettings("http://127.0.0.1:9/v1?api_key=sk-querysecret", "openai"),
      speech: { base_url: "http://u:speechpw-secret@127.0.0.1:9/v1" },
    };
    const hermes = await startHermes(settings);
    try {
      const secrets = /sk-querysecret|speechpw-secret/;
      const ask = await hermes.ask("hello");
      expect(ask.stdout + ask.stderr).toMatch(/127\.0\.0\.1:9/);
      expect(ask.stdout + ask.stderr).not.toMatch(secrets);
      const status = await hermes.cli(["status", "--json"]);
      expect(JSON.parse(status.stdout).model.detail).toMatch(/127\.0\.0\.1:9/);
      expect(JSON.parse(status.stdout).speech.detail).toMatch(/127\.0\.0\.1:9/);
      expect(status.stdout).not.toMatch(secrets);
      const doctor = await hermes.cli(["doctor"]);
      expect(doctor.stdout).toMatch(/model.*127\.0\.0\.1:9/);
      expect(doctor.stdout).not.toMatch(secrets);
    } finally {
      await hermes.stop();
    }
  });

  it("usage rows keep an endpoint's URL without its secret, and the daily count still finds them", () => {
    const store = openStore(":memory:");
    try {
      const endpoint = "https://api.example.org/v1?key=usage-secret-7";
      const row = { runId: null, sessionId: null, step: null, model: "m", cachedTokens: null, firstByteMs: null, totalMs: 5 };
      store.usage.record({ ...row, endpoint, promptTokens: 10, outputTokens: 5, estimated: false, outcome: "ok" });
      const stored = store.db.prepare("SELECT endpoint FROM model_calls").pluck().all() as string[];
      expect(stored.join()).not.toContain("usage-secret-7");
      expect(store.usage.endpointTokensSince(endpoint, "m", 0)).toBe(15);
    } finally {
      store.close();
    }
  });
});
