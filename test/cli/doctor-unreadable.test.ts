// `hermes doctor` run by a user who may not read the service's config (/etc/hermes is 0750 root:hermes,
// hermes.yaml 0640) says so, and how to run it; it used to tell the owner to write a config with `hermes
// setup` (a second config in ~/.config, which then shadows the service's for every command of theirs) or to
// "correct the lines named above".
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTempDir, runCli } from "../helpers/hermes.js";

const NOBODY = 65534;

describe("hermes doctor on a config this user cannot read", () => {
  let home: { path: string; cleanup: () => void };
  afterEach(() => home.cleanup());

  const service = (dirMode: number, fileMode: number) => {
    home = createTempDir();
    chmodSync(home.path, 0o755);
    const conf = join(home.path, "etc-hermes");
    mkdirSync(conf);
    const configPath = join(conf, "hermes.yaml");
    writeFileSync(configPath, "timezone: Europe/Berlin\n");
    chmodSync(configPath, fileMode);
    chmodSync(conf, dirMode);
    return configPath;
  };
  const doctorAsNobody = (configPath: string) =>
    runCli(["doctor", "--config", configPath], { env: { HOME: "/nonexistent", XDG_CONFIG_HOME: "" }, uid: NOBODY, gid: NOBODY });

  it("in a folder it may not enter: does not advise `hermes setup`", async () => {
    const result = await doctorAsNobody(service(0o750, 0o640));
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/permission denied/i);
    expect(result.stdout).not.toContain("hermes setup");
    expect(result.stdout).toMatch(/sudo|service's user/);
  });

  it("a file it may not read: does not say to correct lines", async () => {
    const result = await doctorAsNobody(service(0o755, 0o600));
    expect(result.code).toBe(1);
    expect(result.stdout).not.toContain("correct the lines named above");
    expect(result.stdout).toMatch(/sudo|service's user/);
  });
});
