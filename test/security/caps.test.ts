/** Small caps against a model that floods (the cap on tool calls per step is in test/agent/loop.test.ts). */
import { describe, expect, it } from "vitest";
import { makeAgent } from "../helpers/factories.js";

describe("caps on what one reply can set off", () => {
  it("refuses a reminder that repeats more often than once a minute", async () => {
    const a = await makeAgent({ tools: ["clock", "notes", "remind"] });
    const remind = (cron: string) => ({ toolCalls: [{ name: "remind", arguments: { action: "create", text: "spam", cron } }] });
    a.model.respond((req) => ({ text: `Result: ${req.messages.filter((m) => m.role === "tool").at(-1)?.content}` }));
    a.model.script(remind("* * * * * *"));
    expect((await a.ask("remind me every second")).reply).toMatch(/repeats more often than once a minute/);
    a.model.script(remind("*/1 * * * *"));
    expect((await a.ask("remind me every minute")).reply).toMatch(/Reminder #1 set/);
    expect(a.store.db.prepare("SELECT COUNT(*) FROM reminders").pluck().get()).toBe(1);
  });
});
