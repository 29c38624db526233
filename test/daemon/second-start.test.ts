import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel, useTempDir } from "../helpers/fixture.js";
import { baseSettings, runCli, writeConfig } from "../helpers/hermes.js";

describe("a second hermes start", () => {
  let model: FakeModel;
  beforeEach(async () => {
    model = await useModel();
  });

  it("with the same config is refused, naming the running daemon's pid, and the first keeps its socket", async () => {
    const hermes = await useHermes(baseSettings(model.url));
    const second = await runCli(["start", "--config", hermes.configPath], { cwd: hermes.dir });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`another hermes (pid ${hermes.process.pid}) is serving ${hermes.socketPath}`);
    // The first one still answers on its socket, and nothing of its database was touched by the second.
    const status = await hermes.cli(["status", "--json"]);
    expect(JSON.parse(status.stdout).pid).toBe(hermes.process.pid);
    expect(hermes.logs.filter((l) => l.msg === "hermes is ready")).toHaveLength(1);
  });

  it("with another socket but the same database is refused too, naming the pid", async () => {
    const hermes = await useHermes(baseSettings(model.url));
    const other = useTempDir();
    const config = writeConfig(other, {
      ...baseSettings(model.url),
      storage: { path: hermes.dbPath },
      connectors: { cron: { enabled: false }, cli: { socket: join(other, "other.sock") } },
    });
    const second = await runCli(["start", "--config", config], { cwd: other });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`another hermes (pid ${hermes.process.pid}) uses the database ${hermes.dbPath}`);
    expect(existsSync(join(other, "other.sock"))).toBe(false);
  });

  it("starts after the first was killed (a stale lock is no lock) and after a clean stop", async () => {
    let hermes = await useHermes(baseSettings(model.url));
    await hermes.kill();
    hermes = await hermes.restart();
    expect((await hermes.ask("hello")).code).toBe(0);
    expect(await hermes.stop()).toBe(0);
    expect(existsSync(`${hermes.dbPath}.pid`)).toBe(false);
    hermes = await hermes.restart();
    expect(readFileSync(`${hermes.dbPath}.pid`, "utf8").trim()).toBe(String(hermes.process.pid));
  });
});
