/** hermes doctor asks Discord about the bot token (`GET /users/@me`), as the fake Discord answers it. */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DISCORD_TOKEN, type FakeDiscord, startFakeDiscord } from "../../fakes/discord-server.js";
import { type FakeModel, startFakeModel } from "../../fakes/model-server.js";
import { baseSettings, createTempDir, runCli, writeConfig } from "../../helpers/hermes.js";

describe("hermes doctor on the Discord token", () => {
  let model: FakeModel;
  let discord: FakeDiscord;
  let dir: ReturnType<typeof createTempDir>;
  const doctor = (token: string, allowed: string[] = ["1"]) => {
    const settings = baseSettings(model.url);
    const config = writeConfig(dir.path, {
      ...settings,
      connectors: {
        ...(settings.connectors as object),
        discord: { enabled: true, token, allowed_users: allowed, api_root: discord.apiRoot },
      },
    });
    return runCli(["doctor", "--config", config], { env: { HERMES_SYSTEMD_DIR: join(dir.path, "units") } });
  };

  beforeEach(async () => {
    [model, discord] = await Promise.all([startFakeModel(), startFakeDiscord()]);
    dir = createTempDir();
  });
  afterEach(async () => {
    await Promise.all([model.close(), discord.close()]);
    dir.cleanup();
  });

  it("passes a token Discord accepts, with the bot's name", async () => {
    const result = await doctor(DISCORD_TOKEN);
    expect(result.stdout).toMatch(/✓ discord\s+token accepted by Discord: hermes; 1 allowed user\(s\)/);
  });

  it("fails a well-formed token Discord rejects (revoked, reset), and says what to do", async () => {
    const wrong = `${DISCORD_TOKEN.slice(0, -5)}xxxxx`;
    const result = await doctor(wrong);
    expect(result.stdout).toMatch(/✗ discord\s+Discord rejected the token \(401\)/);
    expect(result.stdout).toContain("fix: set DISCORD_BOT_TOKEN");
    expect(result.stdout).not.toContain(wrong);
    expect(result.code).toBe(1);
  });

  it("warns that nobody can use the bot while allowed_users is empty, as for Telegram", async () => {
    const result = await doctor(DISCORD_TOKEN, []);
    expect(result.stdout).toMatch(/! discord\s+allowed_users is empty: nobody can use the bot\n\s+fix: .*hermes pair discord/);
  });
});
