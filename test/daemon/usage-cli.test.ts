import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, createTempDir, readDb, runCli, writeConfig } from "../helpers/hermes.js";

describe("hermes usage, status and doctor over the real daemon", () => {
  let model: FakeModel;
  beforeEach(async () => {
    model = await useModel();
  });

  it("`hermes usage` totals match the ledger's rows, by model and in JSON; `hermes status` shows today's; `ask --json` carries each step's usage", async () => {
    model.script(
      { toolCalls: [{ name: "clock" }], promptTokens: 210, outputTokens: 12 },
      { text: "noon", promptTokens: 260, outputTokens: 4 },
      { text: "hi", promptTokens: 90, outputTokens: 2 },
    );
    const hermes = await useHermes(baseSettings(model.url));
    const asked = await hermes.ask("time?", "--json");
    const events = asked.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.filter((e) => e.type === "usage")).toMatchObject([
      { step: 1, promptTokens: 210, outputTokens: 12, model: "hermes3:8b" },
      { step: 2, promptTokens: 260, outputTokens: 4 },
    ]);
    await hermes.ask("hello", "--session", "other");

    const db = readDb(hermes.dbPath, (d) =>
      d.prepare("SELECT SUM(prompt_tokens) AS p, SUM(output_tokens) AS o, COUNT(*) AS n FROM model_calls").get(),
    ) as {
      p: number;
      o: number;
      n: number;
    };
    expect(db).toEqual({ p: 560, o: 18, n: 3 });

    const json = JSON.parse((await hermes.cli(["usage", "--json", "--by", "session"])).stdout) as {
      total: Record<string, number>;
      groups: Record<string, unknown>[];
    };
    expect(json.total).toMatchObject({ calls: 3, prompt_tokens: 560, output_tokens: 18, estimated: 0 });
    expect(json.groups).toMatchObject([
      { key: "cli:default", calls: 2, prompt_tokens: 470 },
      { key: "cli:other", calls: 1, prompt_tokens: 90 },
    ]);

    const text = (await hermes.cli(["usage", "--since", "1d", "--by", "model"])).stdout;
    expect(text).toMatch(/^hermes3:8b\s+3\s+0\s+560\s+18\s/m);
    expect(text).toMatch(/^total\s+3\s+0\s+560\s+18\s/m);

    const status = (await hermes.cli(["status"])).stdout;
    expect(status).toMatch(/usage\s+today 3 model calls, 560 prompt \+ 18 output tokens/);

    const bad = await hermes.cli(["usage", "--by", "week"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--by expects one of day, session, model, endpoint/);
  });

  it("`--since` a date reads it in the configured timezone, not the shell's", async () => {
    // Kiritimati is UTC+14: its 1 November starts at 10:00 UTC on 31 October.
    const hermes = await useHermes({ ...baseSettings(model.url), timezone: "Pacific/Kiritimati" });
    const insert = (iso: string) => {
      const db = new Database(hermes.dbPath);
      try {
        db.prepare(
          `INSERT INTO model_calls (at, run_id, session_id, step, endpoint, model, prompt_tokens, output_tokens, cached_tokens,
             estimated, first_byte_ms, total_ms, outcome) VALUES (?, NULL, NULL, NULL, 'primary', 'm', 100, 10, 0, 0, 50, 200, 'ok')`,
        ).run(Date.parse(iso));
      } finally {
        db.close();
      }
    };
    insert("2030-10-31T09:00:00Z"); // 31 October, 23:00 there
    insert("2030-10-31T11:00:00Z"); // 1 November, 01:00 there
    const shellInUtc = { env: { TZ: "UTC" } };
    const day = JSON.parse((await hermes.cli(["usage", "--since", "2030-11-01", "--json"], shellInUtc)).stdout) as {
      since: string;
      total: { calls: number };
    };
    expect(day).toMatchObject({ since: "2030-10-31T10:00:00.000Z", total: { calls: 1 } });
    const hour = JSON.parse((await hermes.cli(["usage", "--since", "2030-10-31 22:00", "--json"], shellInUtc)).stdout);
    expect(hour).toMatchObject({ since: "2030-10-31T08:00:00.000Z", total: { calls: 2 } });
    const none = await hermes.cli(["usage", "--since", "2030-11-02"], shellInUtc);
    expect(none.stdout).toBe("no model calls since 2030-11-02\n");
    const offset = JSON.parse((await hermes.cli(["usage", "--since", "2030-10-31T10:30:00Z", "--json"], shellInUtc)).stdout);
    expect(offset).toMatchObject({ since: "2030-10-31T10:30:00.000Z", total: { calls: 1 } });
  });

  it("a llama.cpp server whose /props says n_ctx 4096 under context_tokens 16384: warned at start and in doctor, and prompts fit 4096", async () => {
    model.nCtx = 4096;
    const settings = baseSettings(model.openaiUrl, "openai");
    const cfg = { ...settings, model: { ...(settings.model as object), context_tokens: 16384, max_output_tokens: 512 } };
    const hermes = await useHermes(cfg);
    const warning = await hermes.waitForLog((l) => typeof l.msg === "string" && l.msg.includes("llama.cpp /props n_ctx"));
    expect(warning.msg).toMatch(/context_tokens is 16384 but llama.cpp \/props n_ctx says hermes3:8b .* has 4096/);
    const huge = "many words ".repeat(4000);
    for (let i = 0; i < 3; i++) await hermes.ask(`${i} ${huge}`);
    for (const r of model.requests) {
      const chars = JSON.stringify(r.messages).length;
      expect(chars / 3.6).toBeLessThan(4096 - 512);
    }
    const status = JSON.parse((await hermes.cli(["status", "--json"])).stdout) as { serving: { context_tokens: number } };
    expect(status.serving.context_tokens).toBe(4096);

    const dir = createTempDir();
    try {
      const config = writeConfig(dir.path, { ...cfg, storage: { path: join(dir.path, "hermes.db") } });
      const doctor = await runCli(["doctor", "--config", config], { env: { HERMES_SYSTEMD_DIR: join(dir.path, "units") } });
      expect(doctor.stdout).toMatch(/! context\s+context_tokens is 16384 but llama.cpp \/props n_ctx says .* 4096/);
      expect(doctor.stdout).toMatch(/fix: set model.context_tokens: 4096/);
    } finally {
      dir.cleanup();
    }
  });

  it("a fallback that answers for a refusing primary: the reply says so in one line, `hermes status` says who serves and why", async () => {
    const fallback = await useModel();
    fallback.models = ["small-model"];
    fallback.respond(() => ({ text: "from the fallback" }));
    try {
      const settings = baseSettings(model.url);
      const fallbacks = [{ provider: "openai", base_url: fallback.openaiUrl, name: "small-model", retries: 0 }];
      const hermes = await useHermes({ ...settings, model: { ...(settings.model as object), fallbacks } });
      await model.pause();
      const asked = await hermes.ask("hello");
      expect(asked.stdout).toMatch(/^\(answered by small-model: the model at 127\.0\.0\.1:\d+ is unreachable\)\n\nfrom the fallback\n$/);
      const status = (await hermes.cli(["status"])).stdout;
      expect(status).toMatch(
        /serving\s+small-model at http:\/\/127\.0\.0\.1:\d+\/v1 \(fallback: the model at 127\.0\.0\.1:\d+ is unreachable\)/,
      );
      await hermes.waitForLog((l) => l.msg === "model calls moved to another endpoint");
      expect((await hermes.ask("again")).stdout).toBe("from the fallback\n");
    } finally {
      await fallback.close();
    }
  });

  it("a scheduled run obeys agent.max_run_tokens too", async () => {
    model.respond(() => ({ toolCalls: [{ name: "clock" }], promptTokens: 2500, outputTokens: 20 }));
    const settings = baseSettings(model.url);
    const hermes = await useHermes({
      ...settings,
      agent: { max_run_tokens: 3000, repeat_limit: 100 },
      connectors: {
        cron: { enabled: true, retries: 0, jobs: [{ name: "digest", schedule: "0 7 * * *", prompt: "digest", deliver: "cli:digest" }] },
      },
    });
    await hermes.cli(["schedules", "run", "digest"]);
    const run = readDb(hermes.dbPath, (d) => d.prepare("SELECT source, stop_reason, reply FROM runs WHERE source = 'cron'").get()) as {
      stop_reason: string;
      reply: string;
    };
    expect(run.stop_reason).toBe("max_run_tokens");
    expect(run.reply).toMatch(/agent\.max_run_tokens = 3000/);
    expect(model.requests).toHaveLength(1);
  });

  it("doctor reads Ollama's /api/show and the fallbacks' /v1/models max_model_len", async () => {
    model.contextLength = 8192;
    const fallback = await useModel();
    fallback.models = ["small-model"];
    fallback.maxModelLen = 32768;
    const dir = createTempDir();
    try {
      const settings = baseSettings(model.url);
      const config = writeConfig(dir.path, {
        ...settings,
        model: {
          ...(settings.model as object),
          context_tokens: 16384,
          fallbacks: [{ provider: "openai", base_url: fallback.openaiUrl, name: "small-model", context_tokens: 16384 }],
        },
        storage: { path: join(dir.path, "hermes.db") },
      });
      const doctor = await runCli(["doctor", "--config", config], { env: { HERMES_SYSTEMD_DIR: join(dir.path, "units") } });
      expect(doctor.stdout).toMatch(/! context\s+context_tokens is 16384 but Ollama \/api\/show .* has 8192/);
      expect(doctor.stdout).toMatch(/✓ fallback 1 openai at .*: model small-model is available/);
      expect(doctor.stdout).toMatch(/✓ context 1\s+\/v1\/models max_model_len: 32768; model.fallbacks\[0\].context_tokens 16384 fits/);
    } finally {
      dir.cleanup();
      await fallback.close();
    }
  });

  it("an openai endpoint that is Ollama's /v1 is warned of at start and in doctor: it ignores num_ctx", async () => {
    model.ollamaVersion = "0.6.5";
    const hermes = await useHermes(baseSettings(model.openaiUrl, "openai"));
    const warned = await hermes.waitForLog((l) => typeof l.msg === "string" && l.msg.includes("is Ollama's OpenAI-compatible API"));
    expect(warned.msg).toMatch(
      /ignores the context size hermes asks for \(num_ctx\).*: set provider: ollama and base_url: http:\/\/127\.0\.0\.1:\d+ \(/,
    );
    const doctor = await hermes.cli(["doctor"]);
    expect(doctor.stdout).toMatch(/! context\s+http:\/\/127\.0\.0\.1:\d+\/v1 is Ollama's OpenAI-compatible API/);
    expect(doctor.stdout).toMatch(
      /fix: set provider: ollama and base_url: http:\/\/127\.0\.0\.1:\d+ \(hermes then asks for 16384 tokens of context\)/,
    );
  });
});
