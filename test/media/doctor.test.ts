import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { type FakeSpeech, startFakeSpeech } from "../fakes/speech-server.js";
import { baseSettings, createTempDir, type Hermes, runCli, startHermes, writeConfig } from "../helpers/hermes.js";

describe("hermes doctor and status on speech and vision", () => {
  let model: FakeModel;
  let speech: FakeSpeech;
  let dir: ReturnType<typeof createTempDir>;
  let hermes: Hermes | undefined;
  const settings = (extra: Record<string, unknown> = {}) => ({
    ...baseSettings(model.url),
    speech: { base_url: speech.url, model: "Systran/faster-whisper-small" },
    ...extra,
  });
  const doctor = (config: string) => runCli(["doctor", "--config", config], { env: { HERMES_SYSTEMD_DIR: join(dir.path, "units") } });

  beforeEach(async () => {
    [model, speech] = await Promise.all([startFakeModel(), startFakeSpeech()]);
    dir = createTempDir();
  });
  afterEach(async () => {
    if (hermes?.process.exitCode === null) await hermes.stop();
    hermes = undefined;
    await Promise.all([model.close(), speech.close()]);
    dir.cleanup();
  });

  it("doctor passes a reachable speech endpoint that lists its model, and says whether the model can see", async () => {
    model.capabilities["hermes3:8b"] = ["completion", "vision"];
    const result = await doctor(writeConfig(dir.path, settings()));
    expect(result.stdout).toMatch(/✓ speech .*Systran\/faster-whisper-small is available/);
    expect(result.stdout).toMatch(/✓ vision .*model hermes3:8b can see images/);
    expect(result.code).toBe(0);
  });

  it("doctor fails a speech model the server does not list, and warns of a chat model without vision", async () => {
    speech.models = ["whisper-1"];
    const result = await doctor(writeConfig(dir.path, settings()));
    expect(result.stdout).toMatch(/✗ speech .*not listed.*\n\s+fix: set speech.model/);
    expect(result.stdout).toMatch(/! vision .*hermes3:8b cannot see images.*\n\s+fix: set model.vision_model/);
    expect(result.code).toBe(1);
  });

  it("doctor fails a speech endpoint that is down, and checks vision_model rather than the chat model", async () => {
    model.models.push("qwen2.5vl:7b");
    model.capabilities["qwen2.5vl:7b"] = ["completion", "vision"];
    await speech.close();
    const result = await doctor(
      writeConfig(dir.path, settings({ model: { ...(baseSettings(model.url).model as object), vision_model: "qwen2.5vl:7b" } })),
    );
    expect(result.stdout).toMatch(/✗ speech .*unreachable/);
    expect(result.stdout).toMatch(/✓ vision .*vision_model qwen2.5vl:7b can see images/);
    expect(result.code).toBe(1);
  });

  it("doctor cannot tell whether a model that is down can see, and does not advise vision_model for it", async () => {
    const result = await doctor(
      writeConfig(dir.path, settings({ model: { ...(baseSettings(model.url).model as object), base_url: "http://127.0.0.1:9" } })),
    );
    expect(result.stdout).toMatch(/✗ model .*unreachable/);
    expect(result.stdout).toMatch(
      /^- vision {4}could not ask http:\/\/127\.0\.0\.1:9 whether model hermes3:8b can see images\n(?! {12}fix:)/m,
    );
    expect(result.stdout).not.toMatch(/vision_model/);
  });

  it("status shows speech and vision", async () => {
    hermes = await startHermes(settings());
    const json = JSON.parse((await hermes.cli(["status", "--json"])).stdout) as Record<string, { ok: boolean | null; detail: string }>;
    expect(json.speech).toEqual({ ok: true, detail: expect.stringContaining("is available") });
    expect(json.vision).toEqual({ ok: false, detail: expect.stringContaining("cannot see images") });
    const text = (await hermes.cli(["status"])).stdout;
    expect(text).toMatch(/^speech {5}ok .*available$/m);
    expect(text).toMatch(/^vision {5}no .*cannot see images/m);
  });
});
