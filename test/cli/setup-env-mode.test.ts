// deploy/install.sh makes /etc/hermes/hermes.env 0640 root:hermes so that the service's user can read it
// (`sudo -u hermes hermes doctor`, as docs/troubleshooting.md says). `sudo hermes setup` setting a token made
// the file 0600: the service's user could no longer read it, and its doctor and config check failed with
// "${TELEGRAM_BOT_TOKEN} is not set in the environment".
import { chmodSync, chownSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type FakeTelegram, startFakeTelegram, TOKEN } from "../fakes/telegram-server.js";
import { createTempDir, runCli } from "../helpers/hermes.js";

const SERVICE = 65534; // stands in for the hermes user and group
let telegram: FakeTelegram;
let home: { path: string; cleanup: () => void };
beforeEach(async () => {
  telegram = await startFakeTelegram();
  home = createTempDir();
});
afterEach(async () => {
  await telegram.close();
  home.cleanup();
});

it("a re-run of setup as root keeps the service's user able to read hermes.env", async () => {
  chmodSync(home.path, 0o755);
  const conf = join(home.path, "etc-hermes");
  mkdirSync(conf);
  const configPath = join(conf, "hermes.yaml");
  const envPath = join(conf, "hermes.env");
  writeFileSync(
    configPath,
    `model: { base_url: "http://127.0.0.1:1" }\nconnectors:\n  telegram: { enabled: true, token: "\${TELEGRAM_BOT_TOKEN}", allowed_users: [42], api_root: "${telegram.apiRoot}" }\n`,
  );
  writeFileSync(envPath, "TELEGRAM_BOT_TOKEN=111:old-token-old-token-old-token-old\n");
  // As deploy/install.sh leaves them.
  for (const p of [conf, configPath, envPath]) chownSync(p, 0, SERVICE);
  chmodSync(conf, 0o750);
  chmodSync(configPath, 0o640);
  chmodSync(envPath, 0o640);
  const asService = () =>
    runCli(["config", "check", "--config", configPath], { env: { HOME: "/nonexistent", XDG_CONFIG_HOME: "" }, uid: SERVICE, gid: SERVICE });
  expect((await asService()).code).toBe(0);

  const env = { HOME: home.path, XDG_CONFIG_HOME: "", HERMES_CONFIG: "" };
  const setup = await runCli(["setup", "telegram", "--telegram-token", TOKEN, "--non-interactive", "--config", configPath], { env });
  expect(setup.code).toBe(0);

  expect(setup.stdout).toContain(`${envPath} (0640)`);
  const after = await asService();
  expect(after.stderr).toBe("");
  expect(after.code).toBe(0);
  expect(statSync(envPath)).toMatchObject({ uid: 0, gid: SERVICE });
  expect(statSync(envPath).mode & 0o777).toBe(0o640);
});

it("a re-run takes away what the file granted to others, and a new file is 0600", async () => {
  const configPath = join(home.path, "hermes.yaml");
  const envPath = join(home.path, "hermes.env");
  writeFileSync(configPath, `connectors:\n  telegram: { api_root: "${telegram.apiRoot}" }\n`);
  const env = { HOME: home.path, XDG_CONFIG_HOME: "", HERMES_CONFIG: "" };
  const setup = () => runCli(["setup", "telegram", "--telegram-token", TOKEN, "--non-interactive", "--config", configPath], { env });
  expect((await setup()).code).toBe(0);
  expect(statSync(envPath).mode & 0o777).toBe(0o600);
  chmodSync(envPath, 0o644);
  expect((await setup()).code).toBe(0);
  expect(statSync(envPath).mode & 0o777).toBe(0o640);
});
