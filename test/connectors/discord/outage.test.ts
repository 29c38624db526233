/**
 * Discord out of reach (the home's internet down) for longer than the two minutes after which the connector
 * is red: discord.js keeps trying, and the systemd watchdog must keep being pinged. It was not, and systemd
 * (WatchdogSec=60s) restarted hermes again and again for as long as the outage lasted, every other
 * connector's runs interrupted with it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { startDaemon } from "../../../src/daemon/daemon.js";
import { createNotifier } from "../../../src/daemon/systemd.js";
import { useDiscord, useModel, waitFor } from "../../helpers/fixture.js";
import { baseSettings, createTempDir, writeConfig } from "../../helpers/hermes.js";

const OWNER = "2000000000000000042";

describe("Discord during an internet outage", () => {
  afterEach(() => vi.useRealTimers());

  it("keeps the systemd watchdog pinged while Discord cannot be reached (an outage is not a hung daemon)", async () => {
    const model = await useModel();
    const discord = await useDiscord();
    const dir = createTempDir();
    const configPath = writeConfig(dir.path, {
      ...baseSettings(model.url),
      connectors: { cron: { enabled: false }, discord: discord.settings([OWNER]) },
      log: { level: "silent" },
    });
    let pings = 0;
    const notifier = { ...createNotifier({}), watchdog: async () => void pings++, watchdogIntervalMs: () => 100 };
    const daemon = await startDaemon(configPath, { notifier });
    try {
      const discordHealth = async () => (await daemon.core.status()).connectors.find((c) => c.name === "discord");
      await waitFor(async () => (await discordHealth())?.ok === true, { message: "discord ready" });
      await waitFor(() => pings > 0, { message: "watchdog pings while healthy" });
      // The internet goes away: the gateway connection drops and Discord cannot be reached.
      await discord.close();
      await waitFor(async () => /connecting to the gateway/.test((await discordHealth())?.detail ?? ""), { message: "discord down" });
      // Three minutes of outage later (only Date moves; the daemon keeps retrying the gateway).
      vi.setSystemTime(Date.now() + 180_000);
      await waitFor(async () => (await discordHealth())?.ok === false, { message: "discord red after two minutes" });
      expect(await discordHealth()).toMatchObject({ ok: false, retrying: true });
      // systemd restarts a daemon whose watchdog pings stop: the pings go on after the health loop saw it red.
      const before = pings;
      await waitFor(() => pings > before + 2, { message: "watchdog pings while Discord is out of reach" });
    } finally {
      vi.useRealTimers();
      await daemon.stop();
      dir.cleanup();
    }
  }, 30_000);
});
