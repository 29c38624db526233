import { it } from "vitest";
import { expectChatConnectorPasses } from "./chat-connector.js";
import { discordSubject } from "./discord-subject.js";

it("the Discord connector passes the conformance kit through the fake REST API and gateway", { timeout: 120_000 }, async () => {
  await expectChatConnectorPasses(discordSubject());
});
