// `hermes doctor` on the config itself: what it says when there is none.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTempDir, runCli } from "../helpers/hermes.js";

describe("hermes doctor's config check", () => {
  let dir: ReturnType<typeof createTempDir>;
  beforeEach(() => {
    dir = createTempDir();
  });
  afterEach(() => dir.cleanup());

  it("with no config file, says to run `hermes setup` or pass --config, not to correct lines", async () => {
    const config = join(dir.path, "hermes.yaml");
    const result = await runCli(["doctor", "--config", config], { env: { HERMES_SYSTEMD_DIR: join(dir.path, "units") } });
    expect(result.stdout).toBe(
      `✗ config    ${config}:1:1: file not found\n` +
        "            fix: write a config with `hermes setup`, or pass --config PATH to the one you have\n",
    );
    expect(result.code).toBe(1);
  });

  it("with a config that does not validate, says to correct the lines it names", async () => {
    const config = join(dir.path, "hermes.yaml");
    writeFileSync(config, "log: { level: loud }\n");
    const result = await runCli(["doctor", "--config", config], { env: { HERMES_SYSTEMD_DIR: join(dir.path, "units") } });
    expect(result.stdout).toMatch(/^✗ config .*log\.level.*\n\s+fix: correct the lines named above/);
    expect(result.code).toBe(1);
  });
});
