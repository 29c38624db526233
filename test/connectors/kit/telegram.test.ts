import { it } from "vitest";
import { expectChatConnectorPasses } from "./chat-connector.js";
import { telegramSubject } from "./telegram-subject.js";

it("the Telegram connector passes the conformance kit through the fake Bot API", { timeout: 120_000 }, async () => {
  await expectChatConnectorPasses(telegramSubject());
});
