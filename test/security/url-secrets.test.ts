import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/store.js";
import { maskUrl, urlSecrets } from "../../src/url-secrets.js";
import { createTempDir, runCli } from "../helpers/hermes.js";

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

  it("usage rows keep an endpoint's URL without its secret, and the daily count still finds them", () => {
    const store = openStore(":memory:");
    try {
      const endpoint = "https://api.example.org/v1?key=usage-secret-7";
      const row = { runId: null, sessionId: null, step: null, model: "m", cachedTokens: null, firstByteMs: null, totalMs: 5 };
      store.usage.record({ ...row, endpoint, promptTokens: 10, outputTokens: 5, estimated: false, outcome: "ok" });
      const stored = store.db.prepare("SELECT endpoint FROM model_calls").pluck().all() as string[];
      expect(stored.join()).not.toContain("usage-secret-7");
      expect(store.usage.endpointTokensSince(endpoint, 0)).toBe(15);
    } finally {
      store.close();
    }
  });
});
