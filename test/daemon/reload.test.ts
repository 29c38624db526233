import { writeFileSync } from "node:fs";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, type Hermes, writeConfig } from "../helpers/hermes.js";

const job = (name: string, schedule: string) => ({ name, schedule, prompt: `the ${name} job`, deliver: "cli:jobs" });

describe("a config reload (SIGHUP)", () => {
  let model: FakeModel;
  beforeEach(async () => {
    model = await useModel();
  });
  const settings = (jobs: unknown[], extra: Record<string, unknown> = {}) => ({
    ...baseSettings(model.url),
    connectors: { cron: { enabled: true, jobs } },
    ...extra,
  });
  const reload = async (h: Hermes, next: Record<string, unknown>) => {
    const before = h.logs.length;
    writeConfig(h.dir, next);
    h.process.kill("SIGHUP");
    await h.waitForLog((l) => l.msg === "config reloaded" && h.logs.indexOf(l) >= before);
    return h.logs.slice(before);
  };

  it("applies added, changed and removed cron jobs at once", async () => {
    const hermes = await useHermes(settings([job("morning", "0 7 * * *"), job("gone", "0 9 * * *")]));
    await reload(hermes, settings([job("morning", "30 6 * * *"), job("evening", "0 19 * * *")]));
    const list = (await hermes.cli(["schedules", "list"])).stdout;
    expect(list).toMatch(/morning .*30 6 \* \* \*/);
    expect(list).toMatch(/evening .*0 19 \* \* \*/);
    expect(list).not.toContain("gone");
    model.script({ text: "evening news" });
    const run = await hermes.cli(["schedules", "run", "evening"]);
    expect(run.code).toBe(0);
    expect(model.requests.at(-1)?.messages.at(-1)?.content).toContain("the evening job");
  });

  it("says in the log and in hermes status which changes wait for a restart", async () => {
    const hermes = await useHermes(settings([]));
    const lines = await reload(hermes, settings([], { storage: { path: "./other/hermes.db" }, log: { level: "info", format: "json" } }));
    const warning = lines.find((l) => l.msg === "some changes take effect only after a restart");
    expect(warning?.keys).toEqual(["storage.path", "log.format"]);
    const status = JSON.parse((await hermes.cli(["status", "--json"])).stdout);
    expect(status.restart_needed_for).toEqual(["storage.path", "log.format"]);
    expect((await hermes.cli(["status"])).stdout).toMatch(/^restart {4}needed for storage\.path, log\.format$/m);
  });

  it("refuses a file emptied by a save cut short, and keeps running with the config it had", async () => {
    const hermes = await useHermes(settings([job("morning", "0 7 * * *")]));
    const before = hermes.logs.length;
    writeFileSync(hermes.configPath, "# hermes.yaml\n\n");
    hermes.process.kill("SIGHUP");
    const refused = await hermes.waitForLog(
      (l) => l.msg === "config reload rejected; keeping the running config" && hermes.logs.indexOf(l) >= before,
    );
    expect(String(refused.detail)).toMatch(/hermes\.yaml:1:1: .*the file is empty/);
    expect((await hermes.cli(["schedules", "list"])).stdout).toMatch(/morning .*0 7 \* \* \*/);
  });
});
