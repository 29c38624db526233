/**
 * A reminder for a time that does not exist (30 February, 24:00) was set for the day it rolled over into;
 * refused now, the model hears that the date is wrong, not that it wrote it in the wrong form.
 */
import { describe, expect, it } from "vitest";
import { makeAgent } from "../helpers/factories.js";

describe("remind with a time that does not exist", () => {
  it("says there is no such date or time, and sets nothing", async () => {
    const a = await makeAgent({ tools: ["remind"] });
    const create = (at: string) => ({ toolCalls: [{ name: "remind", arguments: { action: "create", text: "pay rent", at } }] });
    a.model.respond((req) => ({ text: `Result: ${req.messages.filter((m) => m.role === "tool").at(-1)?.content}` }));
    a.model.script(create("2027-02-30 10:00"));
    expect((await a.ask("remind me on 30 February")).reply).toMatch(/there is no such date or time as "2027-02-30 10:00"/);
    a.model.script(create("24:00"));
    expect((await a.ask("remind me at midnight")).reply).toMatch(/there is no such date or time as "24:00"/);
    a.model.script(create("next payday"));
    expect((await a.ask("remind me on payday")).reply).toMatch(/cannot read the time "next payday"; use "YYYY-MM-DD HH:MM"/);
    expect(a.store.db.prepare("SELECT COUNT(*) FROM reminders").pluck().get()).toBe(0);
  });
});
