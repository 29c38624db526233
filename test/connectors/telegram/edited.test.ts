/**
 * Edited messages: hermes asked for them but nothing handled them, so each one (a stranger's too) stayed in
 * the journal with its text for good, and was replayed at every start. They are not asked for now, and one
 * an older version recorded is marked done (its text dropped) at the next start's replay.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import type { FakeTelegram } from "../../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram } from "../../helpers/fixture.js";
import { baseSettings, readDb } from "../../helpers/hermes.js";

const OWNER = 42;
const STRANGER = 7;

describe("an edited Telegram message", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
  });

  it("is not asked for, not kept, and not replayed at every start", async () => {
    model.respond(() => ({ text: "ok" }));
    const h = await useHermes({
      ...baseSettings(model.url),
      connectors: { cron: { enabled: false }, telegram: telegram.settings([OWNER]) },
    });
    const poll = await telegram.waitFor((c) => c.method === "getUpdates");
    expect(poll.params.allowed_updates).toEqual(["message", "callback_query"]);
    // One that arrives all the same (an older version asked for it, or the server sends it).
    const chat = { id: STRANGER, type: "private", first_name: "s" };
    const from = { id: STRANGER, is_bot: false, first_name: "s" };
    telegram.push({ edited_message: { message_id: 5, date: 0, edit_date: 1, chat, from, text: "secret edited text" } });
    telegram.sendText(OWNER, "hello");
    await telegram.waitFor((c) => c.method === "sendMessage" && c.params.text === "ok");
    await h.stop();
    const again = await h.restart();
    await telegram.waitFor((c) => c.method === "getUpdates", telegram.calls.length);
    await again.stop();
    const rows = readDb(h.dbPath, (db) => db.prepare("SELECT status, payload FROM inbound_updates").all()) as {
      status: string;
      payload: string;
    }[];
    expect(rows.map((r) => r.payload).join()).not.toContain("secret edited text");
    expect(rows.every((r) => r.status === "done")).toBe(true);
    expect(again.logs.some((l) => l.msg === "handling an update received before a restart")).toBe(false);
  });
});
