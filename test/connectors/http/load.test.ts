import { cpSync, readdirSync, readFileSync, renameSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { startFakeModel } from "../../fakes/model-server.js";
import { baseSettings, CLI, createTempDir, launch, runCli, writeConfig } from "../../helpers/hermes.js";
import { baseUrlOf, httpEnv, httpSettings } from "../../helpers/http.js";
import { stoppedAfterEach } from "../../helpers/per-test.js";

describe("the HTTP connector's routes, loaded at the first request", () => {
  const held = stoppedAfterEach();

  it("answers 500 while they cannot be loaded, says so in status, logs it once, and loads them on a later request", async () => {
    const model = await startFakeModel();
    held.model = model;
    // A copy of the built command whose routes' chunk is missing, as after a botched upgrade.
    const dir = createTempDir();
    const root = join(dir.path, "copy");
    cpSync(dirname(CLI), join(root, "dist/app"), { recursive: true });
    symlinkSync(join(dirname(CLI), "../../node_modules"), join(root, "node_modules"));
    const chunks = join(root, "dist/app/chunks");
    const routes = readdirSync(chunks).find((f) => readFileSync(join(chunks, f), "utf8").includes("function requestListener("));
    expect(routes).toBeDefined();
    const chunk = join(chunks, routes as string);
    renameSync(chunk, `${chunk}.away`);

    const config = writeConfig(dir.path, { ...baseSettings(model.url), connectors: { http: httpSettings() } });
    const hermes = await launch(dir.path, config, httpEnv, join(root, "dist/app/hermes.js"));
    held.hermes = hermes;
    const base = await baseUrlOf(hermes);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${base}/healthz`);
      expect(res.status).toBe(500);
      expect(await res.text()).toMatch(/could not load its HTTP routes/);
    }
    expect(hermes.logs.filter((l) => l.msg === "the HTTP connector could not load its routes")).toHaveLength(1);
    const status = JSON.parse((await runCli(["status", "--json", "--config", config])).stdout) as {
      connectors: { name: string; ok: boolean; detail: string }[];
    };
    expect(status.connectors.find((c) => c.name === "http")).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/routes failed to load/),
    });

    renameSync(`${chunk}.away`, chunk);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const after = JSON.parse((await runCli(["status", "--json", "--config", config])).stdout) as typeof status;
    expect(after.connectors.find((c) => c.name === "http")?.ok).toBe(true);
  });
});
