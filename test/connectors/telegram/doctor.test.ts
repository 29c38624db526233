/** hermes doctor asks Telegram about the bot token (getMe), as the fake Bot API answers it. */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "../../fakes/model-server.js";
import { type FakeTelegram, startFakeTelegram, TOKEN } from "../../fakes/telegram-server.js";
import { baseSettings, createTempDir, runCli, writeConfig } from "../../helpers/hermes.js";

describe("hermes doctor on the Telegram token", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  let dir: ReturnType<typeof createTempDir>;
  const doctor = (token: string, apiRoot = telegram.apiRoot) => {
    const settings = baseSettings(model.url);
    const config = writeConfig(dir.path, {
      ...settings,
      connectors: { ...(settings.connectors as object), telegram: { enabled: true, token, allowed_users: [1], api_root: apiRoot } },
    });
    return runCli(["doctor", "--config", config], { env: { HERMES_SYSTEMD_DIR: join(dir.path, "units") } });
  };

  beforeEach(async () => {
    [model, telegram] = await Promise.all([startFakeModel(), startFakeTelegram()]);
    dir = createTempDir();
  });
  afterEach(async () => {
    await Promise.all([model.close(), telegram.close()]);
    dir.cleanup();
  });

  it("passes a token Telegram accepts, with the bot's name", async () => {
    const result = await doctor(TOKEN);
    expect(result.stdout).toMatch(/✓ telegram\s+token accepted by Telegram: @\w+; 1 allowed user\(s\)/);
  });

  it("fails a well-formed token Telegram rejects, and says what to do", async () => {
    const wrong = `${TOKEN.slice(0, -4)}XXXX`;
    const result = await doctor(wrong);
    expect(result.stdout).toMatch(/✗ telegram\s+Telegram rejected the token \(401\)/);
    expect(result.stdout).toContain("fix: set TELEGRAM_BOT_TOKEN");
    expect(result.stdout).not.toContain(wrong);
    expect(result.code).toBe(1);
  });

  it("only warns when Telegram cannot be reached", async () => {
    await telegram.close();
    const result = await doctor(TOKEN);
    expect(result.stdout).toMatch(/! telegram\s+token set \(1 allowed user\(s\)\), but Telegram could not be asked about it/);
    expect(result.stdout).not.toContain(TOKEN);
  });
});
