/**
 * /whoami in a Telegram group: it was answered before the check of whether the message was meant for the bot,
 * so another bot's `/whoami@other_bot`, and a bare `/whoami`, got hermes' answer too.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import { BOT, type FakeTelegram } from "../../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram } from "../../helpers/fixture.js";
import { baseSettings } from "../../helpers/hermes.js";

const OWNER = 42;
const GROUP = -100;

describe("/whoami in a Telegram group", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
  });

  it("answers /whoami@<its username> only, not another bot's /whoami nor a bare one", async () => {
    model.respond(() => ({ text: "hello group" }));
    await useHermes({ ...baseSettings(model.url), connectors: { cron: { enabled: false }, telegram: telegram.settings([OWNER]) } });
    await telegram.waitFor((c) => c.method === "getUpdates");
    const inGroup = (text: string, type: string) =>
      telegram.sendText(OWNER, text, {
        chatId: GROUP,
        chatType: "supergroup",
        entities: [{ type, offset: 0, length: text.split(" ")[0]?.length ?? 0 }],
      });
    inGroup("/whoami@some_other_bot", "bot_command");
    inGroup("/whoami", "bot_command");
    inGroup(`/whoami@${BOT.username}`, "bot_command");
    // A group's messages are taken one after the other: once this one is answered, the three before it were taken.
    inGroup(`@${BOT.username} hi`, "mention");
    await telegram.waitFor((c) => c.method === "sendMessage" && c.params.text === "hello group");
    const answers = telegram.messagesTo(GROUP).map((c) => String(c.params.text));
    expect(answers.filter((t) => t.startsWith("Your Telegram id is 42."))).toHaveLength(1);
  });
});
