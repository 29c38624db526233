/**
 * A stopped run's draft was edited to what it had streamed, cut to the message limit, without a split: on
 * Telegram, whose HTML is longer than the text (each & is &amp;), the edit kept only the first part, and the
 * "(stopped)" mark with the rest was gone. It is split as a reply is.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import type { Call, FakeTelegram } from "../../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram } from "../../helpers/fixture.js";
import { baseSettings, readDb } from "../../helpers/hermes.js";
import { waitFor } from "../../helpers/wait.js";

const OWNER = 42;

describe("a stopped run's long streamed draft on Telegram", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
  });

  it("keeps all of what was streamed, marked as cut short, when its HTML is longer than 4096", async () => {
    const h = await useHermes({
      ...baseSettings(model.url),
      connectors: { cron: { enabled: false }, telegram: telegram.settings([OWNER], { stream_replies: true }) },
    });
    await telegram.waitFor((c) => c.method === "getUpdates");
    const sentTo = (predicate: (c: Call) => boolean) =>
      telegram.waitFor((c) => c.method === "sendMessage" && Number(c.params.chat_id) === OWNER && predicate(c));
    // 3,800 characters as written; each "&" is "&amp;" in Telegram HTML, so formatted it is 7,600.
    const first = `Part one: ${"R&D ".repeat(470).trim()}`;
    const second = `Part two: ${"R&D ".repeat(470).trim()}`;
    model.script({ text: `${first}\n\n${second}`, hangAfterText: true });
    telegram.sendText(OWNER, "something long");
    const draft = await sentTo((c) => String(c.params.text).startsWith("Part one"));
    // The owner has seen both parts in the draft.
    await telegram.waitFor((c) => c.method === "editMessageText" && String(c.params.text).endsWith(second));
    telegram.sendText(OWNER, "/stop");
    await waitFor(
      () => readDb(h.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM runs WHERE reply_sent_at IS NOT NULL").pluck().get()) === 1,
      { message: "the stopped run's end to be handled" },
    );
    const edits = telegram.calls.filter((c) => c.method === "editMessageText" && c.params.message_id === draft.result.message_id);
    const after = [
      edits.at(-1)?.params.text,
      ...telegram
        .messagesTo(OWNER)
        .slice(1)
        .map((c) => c.params.text),
    ].join("\n");
    expect(after).toContain("Part two"); // was: the edit showed only the first paragraph
    expect(after).toContain("(stopped)"); // was: no mark of the stop
  });
});
