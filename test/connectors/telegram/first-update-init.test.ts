/**
 * When getMe failed at start (Telegram not reachable yet) and the first update then arrived, that update
 * started the initialisation, whose replay of unfinished updates handled it, and then it was handled again
 * by the poller that brought it: two runs, two replies to one message.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import type { Call, FakeTelegram } from "../../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram } from "../../helpers/fixture.js";
import { baseSettings } from "../../helpers/hermes.js";

const OWNER = 42;

describe("the first Telegram update after a failed start-up getMe", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
  });

  it("is handled once, not by both the replay and the poller", async () => {
    model.respond((req) => ({ text: `re: ${req.messages.at(-1)?.content.split("\n")[0]}` }));
    telegram.fail("getMe", { status: 400, description: "Bad Request: not yet" });
    // Waiting when the poller first asks, so it brings the update before the background retry of getMe.
    telegram.sendText(OWNER, "first");
    await useHermes({ ...baseSettings(model.url), connectors: { cron: { enabled: false }, telegram: telegram.settings([OWNER]) } });
    const sentTo = (text: string) => (c: Call) => c.method === "sendMessage" && c.params.text === text;
    await telegram.waitFor(sentTo("re: first"));
    // Runs of one chat go one after the other: once the second message is answered, a doubled first one would have been too.
    telegram.sendText(OWNER, "second");
    await telegram.waitFor(sentTo("re: second"));
    expect(telegram.calls.filter((c) => c.method === "getMe:fault")).toHaveLength(1);
    expect(model.requests.map((r) => r.messages.at(-1)?.content.split("\n")[0])).toEqual(["first", "second"]);
    expect(telegram.messagesTo(OWNER).map((c) => c.params.text)).toEqual(["re: first", "re: second"]);
  });
});
