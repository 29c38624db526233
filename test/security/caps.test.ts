/** Small caps against a model that floods: tool calls per step, and reminders that repeat too often. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { baseSettings, type Hermes, readDb, startHermes } from "../helpers/hermes.js";

describe("caps on what one reply can set off", () => {
  let model: FakeModel;
  let hermes: Hermes | undefined;
  beforeEach(async () => {
    model = await startFakeModel();
    hermes = await startHermes({ ...baseSettings(model.url), tools: { enabled: ["clock", "notes", "remind"] } });
  });
  afterEach(async () => {
    await hermes?.stop();
    hermes = undefined;
    await model.close();
  });

  it("runs at most 20 tool calls of one step and tells the user the rest were dropped", async () => {
    const h = hermes as Hermes;
    const calls = Array.from({ length: 500 }, (_, i) => ({ name: "notes", arguments: { action: "add", text: `note ${i}` } }));
    model.script({ toolCalls: calls }, { text: "done" });
    const result = await h.ask("take notes");
    expect(result.stdout).toContain("the model asked for 500 tool calls in one step; only the first 20 were run");
    expect(readDb(h.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM tool_calls").pluck().get())).toBe(20);
    expect(model.requests[1]?.messages.filter((m) => m.role === "tool")).toHaveLength(20);
  });

  it("refuses a reminder that repeats more often than once a minute", async () => {
    const h = hermes as Hermes;
    const remind = (cron: string) => ({ toolCalls: [{ name: "remind", arguments: { action: "create", text: "spam", cron } }] });
    model.respond((req) => ({ text: `Result: ${req.messages.filter((m) => m.role === "tool").at(-1)?.content}` }));
    model.script(remind("* * * * * *"));
    expect((await h.ask("remind me every second")).stdout).toMatch(/repeats more often than once a minute/);
    model.script(remind("*/1 * * * *"));
    expect((await h.ask("remind me every minute")).stdout).toMatch(/Reminder #1 set/);
    expect(readDb(h.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM reminders").pluck().get())).toBe(1);
  });
});
