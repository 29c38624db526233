// Where the CLI finds its config and its secrets, and that no test ever reads the owner's own config.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findConfigPath, loadEnvFile, userConfigPath } from "../../src/cli/socket-path.js";
import { createTempDir, runCli } from "../helpers/hermes.js";

const REPO = resolve(import.meta.dirname, "../..");
const dirs: { cleanup: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});
function tempDir(): string {
  const d = createTempDir();
  dirs.push(d);
  return d.path;
}

describe("the config lookup", () => {
  it("takes --config, then $HERMES_CONFIG, then the user's XDG file, then ./hermes.yaml, then /etc/hermes", () => {
    const home = tempDir();
    const env = { HOME: home };
    // The tests run in the repository, which has its tracked ./hermes.yaml.
    expect(findConfigPath(undefined, env)).toBe("hermes.yaml");
    mkdirSync(join(home, ".config/hermes"), { recursive: true });
    writeFileSync(join(home, ".config/hermes/hermes.yaml"), "log: { level: info }\n");
    expect(findConfigPath(undefined, env)).toBe(join(home, ".config/hermes/hermes.yaml"));
    expect(findConfigPath(undefined, { ...env, HERMES_CONFIG: "/srv/h.yaml" })).toBe("/srv/h.yaml");
    expect(findConfigPath("/x.yaml", { ...env, HERMES_CONFIG: "/srv/h.yaml" })).toBe("/x.yaml");
    const xdg = tempDir();
    expect(userConfigPath({ HOME: home, XDG_CONFIG_HOME: xdg })).toBe(join(xdg, "hermes/hermes.yaml"));
    // The installed command never takes a checkout's ./hermes.yaml for the service's config.
    expect(findConfigPath(undefined, { HOME: tempDir(), HERMES_INSTALLED: "1" })).toBe("/etc/hermes/hermes.yaml");
    expect(findConfigPath(undefined, {})).toBe("hermes.yaml");
  });

  it("reads hermes.env beside the config without overriding what is set, and skips a file it cannot read", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "hermes.env"), '# tokens\nTELEGRAM_BOT_TOKEN=123:abc\nHERMES_MODEL="qwen3:8b"\n');
    const env: NodeJS.ProcessEnv = { HERMES_MODEL: "set-already" };
    expect(loadEnvFile(join(dir, "hermes.yaml"), env)).toBe(join(dir, "hermes.env"));
    expect(env).toEqual({ TELEGRAM_BOT_TOKEN: "123:abc", HERMES_MODEL: "set-already" });
    expect(loadEnvFile(join(tempDir(), "hermes.yaml"), env)).toBeUndefined();
  });

  it("config check sees the tokens of the environment file beside the config (as sudo hermes doctor does the service's)", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "hermes.yaml"),
      'connectors:\n  telegram: { enabled: true, token: "${TELEGRAM_BOT_TOKEN}", allowed_users: [1] }\n',
    );
    writeFileSync(join(dir, "hermes.env"), "TELEGRAM_BOT_TOKEN=123456:secret-token\n");
    const result = await runCli(["config", "check", "--config", join(dir, "hermes.yaml")], { env: { TELEGRAM_BOT_TOKEN: undefined } });
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/token: "?\*+/);
    expect(result.stdout).not.toContain("secret-token");
  });

  it("a bare command in a fresh directory reads no personal config", async () => {
    const result = await runCli(["config", "check"], { cwd: tempDir() });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("/etc/hermes/hermes.yaml");
  });
});

// The whole suite is isolated by test/helpers/setup.ts; this runs this file again (its lookup tests) under a HOME that holds
// a personal config (broken, so reading it fails loudly) and expects it to pass.
describe.skipIf(process.env.HERMES_LOOKUP_CHILD === "1")("a personal config in the user's config dir", () => {
  it("is never read by the tests", () => {
    const home = tempDir();
    mkdirSync(join(home, ".config/hermes"), { recursive: true });
    writeFileSync(join(home, ".config/hermes/hermes.yaml"), "model: [this is the owner's own, broken\n");
    writeFileSync(join(home, ".config/hermes/hermes.env"), "TELEGRAM_BOT_TOKEN=owners-real-token\n");
    const child = spawnSync("npx", ["vitest", "run", "test/cli/config-lookup.test.ts"], {
      cwd: REPO,
      env: { ...process.env, HOME: home, XDG_CONFIG_HOME: "", HERMES_LOOKUP_CHILD: "1", NO_COLOR: "1", FORCE_COLOR: "0" },
      encoding: "utf8",
    });
    expect(child.stdout + child.stderr).toMatch(/Test Files\s+1 passed/);
    expect(child.status).toBe(0);
  }, 60_000);
});

describe("hermes.example.yaml", () => {
  it("is a valid config once its token is set", async () => {
    const result = await runCli(["config", "check", "--config", join(REPO, "hermes.example.yaml")], {
      env: { TELEGRAM_BOT_TOKEN: "123456:example-token" },
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });
});

describe("examples/morning-briefing.yaml", () => {
  it("is a valid config with the owner's ids from the environment, its job delivering to the owner", async () => {
    const result = await runCli(["config", "check", "--config", join(REPO, "examples/morning-briefing.yaml")], {
      env: { TELEGRAM_BOT_TOKEN: "123456:example-token", TELEGRAM_OWNER_ID: "42" },
    });
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain("deliver: telegram:42");
    expect(result.stdout).toMatch(/allowed_users:\s*\n\s*- 42/);
  });
});
