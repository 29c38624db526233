import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/schema.js";
import { createOllamaClient } from "../../src/model/ollama.js";
import { createOpenAIClient } from "../../src/model/openai.js";
import { useHermes, useModel, useTempDir } from "../helpers/fixture.js";
import { baseSettings, runCli, writeConfig } from "../helpers/hermes.js";

const modelConfig = (base_url: string, extra: Record<string, unknown> = {}) =>
  configSchema().parse({ model: { base_url, retries: 0, ...extra } }).model;

describe("the model probe", () => {
  it("openai: a refused API key is down, with the key to check", async () => {
    const model = await useModel();
    model.apiKey = "right";
    const probe = await createOpenAIClient(modelConfig(model.openaiUrl, { provider: "openai", api_key: "wrong" })).probe();
    expect(probe).toMatchObject({ reachable: false, detail: expect.stringMatching(/refused the API key \(HTTP 401 Incorrect API key/) });
    expect(probe.fix).toMatch(/model\.api_key/);
    const right = await createOpenAIClient(modelConfig(model.openaiUrl, { provider: "openai", api_key: "right" })).probe();
    expect(right).toMatchObject({ reachable: true, modelPresent: true });
  });

  it("openai: a 404 from a base_url without /v1 is down, with the /v1 hint", async () => {
    const model = await useModel();
    const probe = await createOpenAIClient(modelConfig(model.url, { provider: "openai" })).probe();
    expect(probe).toMatchObject({ reachable: false, detail: expect.stringMatching(/HTTP 404/) });
    expect(probe.fix).toBe(`the base_url of an OpenAI-compatible endpoint usually ends in /v1 (e.g. ${model.url}/v1)`);
  });

  it("openai: another HTTP error from the model list still counts as reachable (the server may just not list models)", async () => {
    const server = createServer((_req, res) => res.writeHead(503).end("busy"));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const probe = await createOpenAIClient(modelConfig(url, { provider: "openai" })).probe();
      expect(probe).toMatchObject({ reachable: true, detail: expect.stringMatching(/^cannot list models: .*HTTP 503/) });
    } finally {
      server.close();
    }
  });

  it("ollama: a 401 from something in front of it, or a 404 from a base_url with /v1, is down with its fix", async () => {
    const model = await useModel();
    const wrongPath = await createOllamaClient(modelConfig(model.openaiUrl)).probe();
    expect(wrongPath).toMatchObject({
      reachable: false,
      detail: expect.stringMatching(/HTTP 404/),
      fix: expect.stringMatching(/without \/v1/),
    });
    model.apiKey = "proxy";
    const refused = await createOllamaClient(modelConfig(model.url)).probe();
    expect(refused).toMatchObject({
      reachable: false,
      detail: expect.stringMatching(/HTTP 401/),
      fix: expect.stringMatching(/credentials/),
    });
  });

  it("`hermes doctor` fails the model check and `hermes status` says down, each with the key to check", async () => {
    const model = await useModel();
    model.apiKey = "right";
    const settings = baseSettings(model.openaiUrl, "openai");
    const cfg = { ...settings, model: { ...(settings.model as object), api_key: "wrong" } };

    const dir = useTempDir();
    const config = writeConfig(dir, { ...cfg, storage: { path: join(dir, "hermes.db") } });
    const doctor = await runCli(["doctor", "--config", config], { env: { HERMES_SYSTEMD_DIR: join(dir, "units") } });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/^✗ model\s+the model endpoint .* refused the API key \(HTTP 401/m);
    expect(doctor.stdout).toMatch(/fix: check model\.api_key/);

    const hermes = await useHermes(cfg);
    await hermes.waitForLog((l) => String(l.msg).startsWith("model endpoint not ready"));
    const status = (await hermes.cli(["status"])).stdout;
    expect(status).toMatch(
      /^model\s+down openai hermes3:8b at .*: the model endpoint .* refused the API key \(HTTP 401.*; check model\.api_key/m,
    );
  });
});
