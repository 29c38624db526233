/**
 * With the CLI socket turned off and no chat connector or HTTP door, only cron is left; with no job due it
 * holds no timer, and the daemon ended (exit 0) right after READY: under Restart=on-failure it stayed down,
 * and the reminders it was to send were never sent.
 */
import { describe, expect, it } from "vitest";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings } from "../helpers/hermes.js";

describe("a daemon with nothing but cron", () => {
  it("keeps running until it is told to stop", async () => {
    const model = await useModel();
    const h = await useHermes({ ...baseSettings(model.url), connectors: { cli: { enabled: false }, cron: { enabled: true } } });
    const exit = new Promise<number | null>((r) => h.process.once("exit", r));
    // It ended within a few milliseconds of READY: a second is far more than enough to see it happen.
    expect(await Promise.race([exit, new Promise<"running">((r) => setTimeout(() => r("running"), 1000))])).toBe("running");
    expect(await h.stop()).toBe(0);
  });
});
