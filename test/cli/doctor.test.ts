// `hermes doctor` on the config itself: what it says when there is none; and run by a user other than the service's.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { baseSettings, createTempDir, runCli, writeConfig } from "../helpers/hermes.js";

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

  // As root, doctor runs as nobody beside a folder of root's, as an owner runs it beside the service's.
  it.skipIf(process.getuid?.() !== 0)(
    "run by another user than the service's, warns that it cannot look into the service's folders",
    async () => {
      chmodSync(dir.path, 0o755);
      const state = join(dir.path, "state");
      mkdirSync(state, { mode: 0o700 });
      const settings = { ...baseSettings("http://127.0.0.1:9"), storage: { path: join(state, "hermes.db") } };
      const config = writeConfig(dir.path, { ...settings, connectors: { cli: { socket: join(state, "hermes.sock") } } });
      chmodSync(config, 0o644);
      const result = await runCli(["doctor", "--config", config], {
        env: { HERMES_SYSTEMD_DIR: join(dir.path, "units") },
        uid: 65534,
        gid: 65534,
      });
      for (const name of ["storage", "socket"])
        expect(result.stdout).toMatch(
          new RegExp(
            `^! ${name}\\s+\\S+/state belongs to another user \\(uid 0\\), so this user cannot look into it\\n\\s+fix: run \`hermes doctor\` as the service's user`,
            "m",
          ),
        );
      expect(result.stdout).not.toMatch(/not writable/);
    },
  );
});
