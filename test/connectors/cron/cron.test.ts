import { join } from "node:path";
import { Cron } from "croner";
import { beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { HistoryStore } from "../../../src/store/history.js";
import { openStore } from "../../../src/store/store.js";
import { describeTime, parseLocalDateTime, zonedCron, zonedToUtc } from "../../../src/time.js";
import type { FakeModel } from "../../fakes/model-server.js";
import type { FakeTelegram } from "../../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram } from "../../helpers/fixture.js";
import { baseSettings, createTempDir, type Hermes, readDb, writeConfig } from "../../helpers/hermes.js";
import { waitFor } from "../../helpers/wait.js";

const OWNER = 42;

describe("schedules across daylight-saving changes (croner)", () => {
  const next = (zone: string, from: string, n = 2) =>
    new Cron("30 2 * * *", { timezone: zone, paused: true }).nextRuns(n, new Date(from)).map((d) => d.toISOString());

  it("moves Berlin's 02:30 slot on the spring-forward day to 03:00 instead of dropping it", () => {
    expect(next("Europe/Berlin", "2027-03-27T12:00:00Z")).toEqual(["2027-03-28T01:00:00.000Z", "2027-03-29T00:30:00.000Z"]);
  });

  it("runs Berlin's 02:30 slot once on the fall-back day", () => {
    expect(next("Europe/Berlin", "2027-10-30T12:00:00Z")).toEqual(["2027-10-31T00:30:00.000Z", "2027-11-01T01:30:00.000Z"]);
  });

  it("does the same in America/New_York", () => {
    expect(next("America/New_York", "2027-03-13T12:00:00Z")).toEqual(["2027-03-14T07:00:00.000Z", "2027-03-15T06:30:00.000Z"]);
    expect(next("America/New_York", "2027-11-06T12:00:00Z")).toEqual(["2027-11-07T07:30:00.000Z", "2027-11-08T07:30:00.000Z"]);
  });

  it("finds the previous slot for catch-up", () => {
    const previous = new Cron("0 7 * * *", { timezone: "Europe/Berlin", paused: true }).previousRuns(1, new Date("2026-11-30T09:00:00Z"));
    expect(previous[0]?.toISOString()).toBe("2026-11-30T06:00:00.000Z");
  });
});

describe("local times for reminders", () => {
  const now = new Date("2026-11-29T17:00:00Z"); // Sunday 18:00 in Berlin
  it("reads times in the configured zone and says them back in words", () => {
    const at = parseLocalDateTime("2026-11-30 18:00", "Europe/Berlin", now);
    expect(at?.toISOString()).toBe("2026-11-30T17:00:00.000Z");
    expect(describeTime(at as Date, "Europe/Berlin", now)).toBe("tomorrow, Mon 30 Nov, 18:00 CET");
    const later = parseLocalDateTime("19:30", "Europe/Berlin", now);
    expect(describeTime(later as Date, "Europe/Berlin", now)).toBe("today, Sun 29 Nov, 19:30 CET");
    const past = parseLocalDateTime("08:00", "Europe/Berlin", now);
    expect(past?.toISOString()).toBe("2026-11-30T07:00:00.000Z");
    expect(parseLocalDateTime("next tuesday", "Europe/Berlin", now)).toBeUndefined();
  });

  it("moves a time that does not exist (spring forward) forward by the gap, and takes the first of a time shown twice", () => {
    const at = (zone: string, year: number, month: number, day: number, hour: number, minute = 30) =>
      zonedToUtc({ year, month, day, hour, minute, second: 0 }, zone).toISOString();
    // East and west of Greenwich alike: Berlin's 02:30 is 03:30 CEST, New York's 02:30 is 03:30 EDT.
    expect(at("Europe/Berlin", 2027, 3, 28, 2)).toBe("2027-03-28T01:30:00.000Z");
    expect(at("America/New_York", 2027, 3, 14, 2)).toBe("2027-03-14T07:30:00.000Z");
    expect(at("Australia/Lord_Howe", 2026, 10, 4, 2, 15)).toBe("2026-10-03T15:45:00.000Z"); // a half-hour gap: 02:15 is 02:45
    // Beirut skips midnight: the day starts at 01:00 EEST, not in the evening before.
    expect(at("Asia/Beirut", 2026, 3, 29, 0, 0)).toBe("2026-03-28T22:00:00.000Z");
    // The repeated hour: its first 02:30 (CEST), in both directions of the search.
    expect(at("Europe/Berlin", 2027, 10, 31, 2)).toBe("2027-10-31T00:30:00.000Z");
    expect(at("America/New_York", 2027, 11, 7, 1)).toBe("2027-11-07T05:30:00.000Z");
    // And a plain time on either side of a change is itself.
    expect(at("Europe/Berlin", 2027, 3, 28, 1)).toBe("2027-03-28T00:30:00.000Z");
    expect(at("Europe/Berlin", 2027, 3, 28, 3)).toBe("2027-03-28T01:30:00.000Z");
    expect(at("Europe/Berlin", 2027, 10, 31, 3)).toBe("2027-10-31T02:30:00.000Z");
  });

  it("a reminder for a time the clock skips is set an hour later, not earlier", () => {
    const now = new Date("2027-03-27T12:00:00Z");
    const at = parseLocalDateTime("2027-03-28 02:30", "Europe/Berlin", now) as Date;
    expect(describeTime(at, "Europe/Berlin", now)).toBe("tomorrow, Sun 28 Mar, 03:30 CEST");
  });
});

describe("schedules of several fixed times across daylight-saving changes", () => {
  const runs = (pattern: string, zone: string, from: string, n: number) =>
    zonedCron(pattern, zone, { paused: true })
      .nextRuns(n, new Date(from))
      .map((d) => describeTime(d, zone, new Date(from)).replace(/^\w+, /, ""));

  it("runs a listed 02:30 at 03:00 on the spring-forward day and once on the fall-back day", () => {
    expect(runs("30 2,14 * * *", "Europe/Berlin", "2027-03-27T14:00:00Z", 3)).toEqual([
      "Sun 28 Mar, 03:00 CEST",
      "Sun 28 Mar, 14:30 CEST",
      "Mon 29 Mar, 02:30 CEST",
    ]);
    expect(runs("30 2,14 * * *", "Europe/Berlin", "2027-10-30T14:00:00Z", 3)).toEqual([
      "Sun 31 Oct, 02:30 CEST",
      "Sun 31 Oct, 14:30 CET",
      "Mon 1 Nov, 02:30 CET",
    ]);
    expect(runs("15,45 2 * * *", "Europe/Berlin", "2027-10-30T14:00:00Z", 3)).toEqual([
      "Sun 31 Oct, 02:15 CEST",
      "Sun 31 Oct, 02:45 CEST",
      "Mon 1 Nov, 02:15 CET",
    ]);
    // Every few minutes is no fixed time: the repeated hour runs twice, the skipped one not at all.
    expect(runs("0 */1 * * *", "Europe/Berlin", "2027-10-31T00:30:00Z", 2)).toEqual(["Sun 31 Oct, 02:00 CET", "Sun 31 Oct, 03:00 CET"]);
  });
});

describe("the cron connector", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  let hermes: Hermes | undefined;
  const settings = (cron: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    ...baseSettings(model.url),
    connectors: {
      cron: { enabled: true, ...cron },
      telegram: telegram.settings([OWNER]),
    },
    ...extra,
  });
  const firings = (h: Hermes, job: string) =>
    readDb(
      h.dbPath,
      (db) =>
        db.prepare("SELECT * FROM firings WHERE job = ? ORDER BY slot_at").all(job) as {
          slot_at: number;
          status: string;
          message_id: string;
        }[],
    );
  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
  });

  it("fires a seconds-level job for real and records the delivered message id", async () => {
    model.respond(() => ({ text: "Tick report." }));
    hermes = await useHermes(
      settings({ jobs: [{ name: "tick", schedule: "*/2 * * * * *", prompt: "Report.", deliver: `telegram:${OWNER}` }] }),
    );
    const sent = await telegram.waitFor((c) => c.method === "sendMessage" && c.params.text === "Tick report.");
    await hermes.waitForLog((l) => l.msg === "job delivered");
    const ok = firings(hermes, "tick").find((f) => f.status === "ok");
    expect(ok?.message_id).toBe(String(sent.result.message_id));
    expect(model.requests[0]?.messages.at(-1)?.content).toMatch(/^Report\./);
  });

  it("delivers a morning briefing built from clock and notes; `hermes schedules` lists it", async () => {
    model.script({
      toolCalls: [
        { name: "clock", arguments: {} },
        { name: "notes", arguments: { action: "list" } },
      ],
    });
    model.respond((req) => ({
      text: `Good morning. ${req.messages
        .filter((m) => m.role === "tool")
        .map((m) => m.content.split(" (")[0])
        .join(" / ")}`,
    }));
    hermes = await useHermes(
      settings({
        jobs: [
          {
            name: "morning-briefing",
            schedule: "0 7 * * *",
            prompt: "Morning briefing: time and open notes.",
            deliver: `telegram:${OWNER}`,
          },
        ],
      }),
    );
    const list = await hermes.cli(["schedules"]);
    expect(list.stdout).toMatch(/morning-briefing\s+\[0 7 \* \* \*, Europe\/Berlin\] → telegram:42\n\s+next: .*07:00 CE/);
    const run = await hermes.cli(["schedules", "run", "morning-briefing"]);
    expect(run.stdout).toContain("morning-briefing: ok");
    const briefing = telegram.messagesTo(OWNER).at(-1);
    expect(briefing?.params.text).toMatch(/^Good morning\. \w+day, .* \/ No notes yet\.$/);
    expect((await hermes.cli(["schedules"])).stdout).toContain("last: ok");
  });

  it("fires a reminder the model created from a chat message into the same chat, and it survives a restart", async () => {
    model.script({ toolCalls: [{ name: "remind", arguments: { action: "create", text: "call mum", in_minutes: 0.05 } }] });
    model.respond((req) => ({ text: `OK: ${req.messages.at(-1)?.content}` }));
    const h = await useHermes(settings({}));
    hermes = h;
    await telegram.waitFor((c) => c.method === "getUpdates");
    telegram.sendText(OWNER, "remind me to call mum in 3 seconds");
    const confirmation = await telegram.waitFor((c) => c.method === "sendMessage" && String(c.params.text).startsWith("OK:"));
    expect(confirmation.params.text).toMatch(/Reminder #1 set: "call mum" at today, \w{3} \d+ \w{3}, \d\d:\d\d CET/);
    await h.kill();
    hermes = await h.restart();
    const reminder = await telegram.waitFor((c) => c.method === "sendMessage" && String(c.params.text).startsWith("⏰ Reminder: call mum"));
    expect(Number(reminder.params.chat_id)).toBe(OWNER);
    await hermes.waitForLog((l) => l.msg === "reminder delivered");
    expect(firings(hermes, "remind:1").map((f) => f.status)).toEqual(["ok"]);
  });

  /** Reminders written into a new data directory's database before hermes starts on it, as the remind tool writes them. */
  const withReminders = (add: (schedules: ReturnType<typeof openStore>["schedules"], db: ReturnType<typeof openStore>["db"]) => void) => {
    const dir = createTempDir();
    onTestFinished(dir.cleanup);
    const store = openStore(join(dir.path, "data", "hermes.db"));
    add(store.schedules, store.db);
    store.close();
    return dir.path;
  };
  const reminderTexts = () => telegram.messagesTo(OWNER).map((c) => String(c.params.text).split(" (")[0]);

  it("a reminder delivered into a CLI session is the owner's own: a later note there does not ask, a job's reply there still makes it ask", async () => {
    const dir = withReminders((schedules) => {
      schedules.addReminder({ channel: "cli:default", text: "stretch", at: Date.now() + 600_000, timezone: "Europe/Berlin" });
    });
    model.respond((req) => (req.messages.at(-1)?.role === "tool" ? { text: "Noted." } : { text: "Morning news." }));
    hermes = await useHermes(
      settings(
        { jobs: [{ name: "news", schedule: "0 7 * * *", prompt: "News.", deliver: "cli:default" }] },
        { tools: { enabled: ["notes"] } },
      ),
      { dir },
    );
    expect((await hermes.cli(["schedules", "run", "remind:1"])).code).toBe(0);
    model.script({ toolCalls: [{ name: "notes", arguments: { action: "add", text: "buy milk" } }] });
    const own = await hermes.ask("note: buy milk", "--no");
    expect(own.stderr).not.toContain("hermes wants to run notes");
    expect(own.stdout).toContain("Noted.");
    expect((await hermes.cli(["schedules", "run", "news"])).code).toBe(0);
    model.script({ toolCalls: [{ name: "notes", arguments: { action: "add", text: "forward all mail" } }] });
    const after = await hermes.ask("do what it says", "--no");
    expect(after.stderr).toContain("hermes wants to run notes");
    const notes = readDb(hermes.dbPath, (db) => db.prepare("SELECT text FROM notes").pluck().all());
    expect(notes).toEqual(["buy milk"]);
  });

  it("a one-time reminder run by hand before its time is not sent again at its time", async () => {
    const soon = Date.now() + 2500;
    const dir = withReminders((schedules) => {
      schedules.addReminder({ channel: `telegram:${OWNER}`, text: "early bird", at: soon, timezone: "Europe/Berlin" });
      schedules.addReminder({ channel: `telegram:${OWNER}`, text: "after it", at: soon + 1000, timezone: "Europe/Berlin" });
    });
    hermes = await useHermes(settings({}), { dir });
    const run = await hermes.cli(["schedules", "run", "remind:1"]);
    expect(run.code).toBe(0);
    await telegram.waitFor((c) => c.method === "sendMessage" && String(c.params.text).startsWith("⏰ Reminder: after it"));
    expect(reminderTexts()).toEqual(["⏰ Reminder: early bird", "⏰ Reminder: after it"]);
    expect(firings(hermes, "remind:1").map((f) => f.status)).toEqual(["ok"]);
  });

  it("sends a repeating reminder whose time passed while hermes was down late, once, saying so", async () => {
    const dir = withReminders((schedules, db) => {
      const r = schedules.addReminder({
        channel: `telegram:${OWNER}`,
        text: "take pills",
        cron: "*/3 * * * * *",
        timezone: "Europe/Berlin",
      });
      db.prepare("UPDATE reminders SET created_at = ? WHERE id = ?").run(Date.now() - 60_000, r.id); // made a minute ago
    });
    hermes = await useHermes(settings({}), { dir });
    const late = await telegram.waitFor((c) => c.method === "sendMessage" && String(c.params.text).startsWith("⏰ Reminder: take pills"));
    expect(late.params.text).toMatch(/\(due today, .*; hermes was not running then\)$/);
    await hermes.waitForLog((l) => l.msg === "reminder delivered");
    const slots = firings(hermes, "remind:1").map((f) => f.slot_at);
    expect(new Set(slots).size).toBe(slots.length);
  });

  it("sends a reminder again when its delivery fails, instead of losing it; a one-shot retires once it is out", async () => {
    const dir = withReminders((schedules) => {
      schedules.addReminder({ channel: `telegram:${OWNER}`, text: "call the plumber", at: Date.now() + 1500, timezone: "Europe/Berlin" });
    });
    telegram.fail("sendMessage", { status: 403, description: "Forbidden: bot was blocked by the user" }, 1);
    hermes = await useHermes(settings({ retry_delay_s: 0.05 }), { dir });
    await hermes.waitForLog((l) => l.msg === "delivery failed; will retry" && l.reminder === 1);
    await hermes.waitForLog((l) => l.msg === "reminder delivered");
    expect(reminderTexts()).toEqual(["⏰ Reminder: call the plumber"]);
    expect(firings(hermes, "remind:1").map((f) => f.status)).toEqual(["ok"]);
    expect((await hermes.cli(["schedules", "list"])).stdout).not.toContain("call the plumber");
  });

  it("records a reminder that fails every try as delivery_failed after the retries, and a job's reply likewise; `schedules run` tries once", async () => {
    model.respond(() => ({ text: "Your brief." }));
    const dir = withReminders((schedules) => {
      schedules.addReminder({ channel: `telegram:${OWNER}`, text: "never arrives", at: Date.now() + 1000, timezone: "Europe/Berlin" });
    });
    telegram.refuseChat(OWNER, { status: 403, description: "Forbidden: bot was blocked by the user" });
    const jobs = [
      { name: "tick", schedule: "*/2 * * * * *", prompt: "Tick.", deliver: `telegram:${OWNER}` },
      { name: "briefing", schedule: "0 7 * * *", prompt: "Brief me.", deliver: `telegram:${OWNER}` },
    ];
    const h = await useHermes(settings({ jobs, retries: 2, retry_delay_s: 0.05 }), { dir });
    hermes = h;
    await h.waitForLog((l) => l.msg === "reminder could not be delivered");
    expect(firings(h, "remind:1").map((f) => f.status)).toEqual(["delivery_failed"]);
    expect(h.logs.filter((l) => l.msg === "delivery failed; will retry" && l.reminder === 1)).toHaveLength(2);
    await h.waitForLog((l) => l.msg === "job ran but its reply could not be delivered" && l.job === "tick");
    expect(h.logs.filter((l) => l.msg === "delivery failed; will retry" && l.job === "tick").length).toBeGreaterThanOrEqual(2);
    const refused = () => telegram.calls.filter((c) => c.method === "sendMessage:fault").length;
    const before = refused();
    const requests = model.requests.length;
    const run = await h.cli(["schedules", "run", "briefing"]);
    expect(run.stderr).toMatch(/briefing: delivery_failed/);
    expect(model.requests.length).toBe(requests + 1);
    expect(h.logs.some((l) => l.msg === "delivery failed; will retry" && l.job === "briefing")).toBe(false); // told at once
    expect(refused()).toBeGreaterThan(before);
  });

  it("does not send a reminder the owner cancelled while its delivery waited to be tried again, and records it cancelled, not failed", async () => {
    const dir = withReminders((schedules) => {
      schedules.addReminder({ channel: `telegram:${OWNER}`, text: "call the plumber", at: Date.now() + 1000, timezone: "Europe/Berlin" });
    });
    model.script({ toolCalls: [{ name: "remind", arguments: { action: "cancel", id: 1 } }] }, { text: "Cancelled it." });
    telegram.fail("sendMessage", { status: 403, description: "Forbidden: bot was blocked by the user" }, 1); // its first try
    const h = await useHermes(settings({ retry_delay_s: 1 }), { dir });
    hermes = h;
    await h.waitForLog((l) => l.msg === "delivery failed; will retry" && l.reminder === 1);
    telegram.sendText(OWNER, "cancel the plumber reminder");
    await telegram.waitFor((c) => c.method === "sendMessage" && c.params.text === "Cancelled it.");
    await h.waitForLog((l) => l.msg === "reminder cancelled while its delivery waited to be tried again; not sent" && l.reminder === 1);
    expect(reminderTexts().filter((t) => t?.startsWith("⏰"))).toEqual([]);
    // Not a failure: nothing at error level, and its firing says what happened.
    expect(h.logs.some((l) => Number(l.level) >= 50 && l.reminder === 1)).toBe(false);
    expect(firings(h, "remind:1").map((f) => f.status)).toEqual(["cancelled"]);
  });

  it("sends a one-time reminder a killed hermes had taken but not sent, at the next start", async () => {
    const due = Date.now() - 60_000;
    const dir = withReminders((schedules) => {
      const r = schedules.addReminder({ channel: `telegram:${OWNER}`, text: "feed the cat", at: due, timezone: "Europe/Berlin" });
      schedules.claim(`remind:${r.id}`, due); // taken when the power went, before it was out
    });
    hermes = await useHermes(settings({}), { dir });
    const late = await telegram.waitFor((c) => c.method === "sendMessage" && String(c.params.text).startsWith("⏰ Reminder: feed the cat"));
    expect(late.params.text).toMatch(/hermes was not running then\)$/);
    await hermes.waitForLog((l) => l.msg === "reminder delivered");
    expect(firings(hermes, "remind:1").map((f) => f.status)).toEqual(["ok"]);
    expect((await hermes.cli(["schedules", "list"])).stdout).not.toContain("feed the cat");
  });

  it("sends a repeating reminder whose time came as hermes was killed, late, at the next start", async () => {
    const dir = withReminders((schedules, db) => {
      const r = schedules.addReminder({ channel: `telegram:${OWNER}`, text: "stretch", cron: "0 * * * *", timezone: "Europe/Berlin" });
      db.prepare("UPDATE reminders SET created_at = ? WHERE id = ?").run(Date.now() - 86_400_000, r.id);
      const slot = new Cron("0 * * * *", { timezone: "Europe/Berlin", paused: true }).previousRuns(1, new Date())[0] as Date;
      schedules.claim(`remind:${r.id}`, slot.getTime()); // this hour's, taken but not sent
    });
    hermes = await useHermes(settings({}), { dir });
    const late = await telegram.waitFor((c) => c.method === "sendMessage" && String(c.params.text).startsWith("⏰ Reminder: stretch"));
    expect(late.params.text).toMatch(/hermes was not running then\)$/);
    await hermes.waitForLog((l) => l.msg === "reminder delivered");
    expect(firings(hermes, "remind:1").map((f) => f.status)).toEqual(["ok"]);
  });

  it("keeps a one-time reminder whose retries a stop cut short, and the next start sends it", async () => {
    const dir = withReminders((schedules) => {
      schedules.addReminder({ channel: `telegram:${OWNER}`, text: "take the bins out", at: Date.now() + 1000, timezone: "Europe/Berlin" });
    });
    telegram.refuseChat(OWNER, { status: 403, description: "Forbidden: bot was blocked by the user" });
    const h = await useHermes(settings({ retry_delay_s: 600 }), { dir });
    hermes = h;
    await h.waitForLog((l) => l.msg === "delivery failed; will retry");
    await h.stop();
    expect(firings(h, "remind:1").map((f) => f.status)).toEqual(["interrupted"]);
    const telegram2 = await useTelegram();
    writeConfig(h.dir, { ...settings({}), connectors: { cron: { enabled: true }, telegram: telegram2.settings([OWNER]) } });
    hermes = await h.restart();
    const late = await telegram2.waitFor(
      (c) => c.method === "sendMessage" && String(c.params.text).startsWith("⏰ Reminder: take the bins out"),
    );
    expect(late.params.text).toMatch(/hermes was not running then\)$/);
    await hermes.waitForLog((l) => l.msg === "reminder delivered");
    expect(firings(hermes, "remind:1").map((f) => f.status)).toEqual(["ok"]);
  });

  it("moves repeating reminders to the configured timezone, at start and on a reload; a one-shot keeps its instant", async () => {
    const at = Date.now() + 3_600_000;
    const dir = withReminders((schedules) => {
      schedules.addReminder({ channel: `telegram:${OWNER}`, text: "water plants", cron: "0 9 * * *", timezone: "America/New_York" });
      schedules.addReminder({ channel: `telegram:${OWNER}`, text: "dentist", at, timezone: "America/New_York" });
    });
    const h = await useHermes(settings({}), { dir });
    hermes = h;
    const listed = async (text: string) => {
      const rows = JSON.parse((await h.cli(["schedules", "list", "--json"])).stdout) as { name: string; timezone: string; next: string }[];
      return rows.find((r) => r.name.includes(text));
    };
    const nineIn = (zone: string) => new Cron("0 9 * * *", { timezone: zone, paused: true }).nextRun()?.toISOString();
    expect(await listed("water plants")).toMatchObject({ timezone: "Europe/Berlin", next: nineIn("Europe/Berlin") });
    expect(await listed("dentist")).toMatchObject({ timezone: "America/New_York", next: new Date(at).toISOString() });
    const before = h.logs.length;
    writeConfig(h.dir, { ...settings({}), timezone: "Asia/Tokyo" });
    h.process.kill("SIGHUP");
    await h.waitForLog((l) => l.msg === "repeating reminders moved to the configured timezone" && h.logs.indexOf(l) >= before);
    expect(await listed("water plants")).toMatchObject({ timezone: "Asia/Tokyo", next: nineIn("Asia/Tokyo") });
    expect(await listed("dentist")).toMatchObject({ timezone: "America/New_York", next: new Date(at).toISOString() });
  });

  it("does not send a repeating reminder late when a reload's new timezone puts its time a little in the past", async () => {
    // Its time of day was half an hour ago in Tokyo; in New York, where it last went out, that was ten hours earlier.
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat("en-GB", { timeZone: "Asia/Tokyo", hour: "numeric", minute: "numeric", hourCycle: "h23" })
        .formatToParts(new Date(Date.now() - 30 * 60_000))
        .map((p) => [p.type, p.value]),
    );
    const pattern = `${Number(parts.minute)} ${Number(parts.hour)} * * *`;
    const dir = withReminders((schedules, db) => {
      const r = schedules.addReminder({ channel: `telegram:${OWNER}`, text: "stand up", cron: pattern, timezone: "America/New_York" });
      db.prepare("UPDATE reminders SET created_at = ? WHERE id = ?").run(Date.now() - 7 * 86_400_000, r.id);
      const last = new Cron(pattern, { timezone: "America/New_York", paused: true }).previousRuns(1, new Date())[0] as Date;
      const firing = schedules.claim(`remind:${r.id}`, last.getTime()) as number;
      schedules.finish(firing, "ok", { messageId: "1" });
    });
    const h = await useHermes({ ...settings({}), timezone: "America/New_York" }, { dir });
    hermes = h;
    const before = h.logs.length;
    writeConfig(h.dir, { ...settings({}), timezone: "Asia/Tokyo" });
    h.process.kill("SIGHUP");
    await h.waitForLog((l) => l.msg === "cron jobs reloaded" && h.logs.indexOf(l) >= before);
    await h.waitForLog((l) => l.msg === "repeating reminders moved to the configured timezone" && h.logs.indexOf(l) >= before);
    expect(firings(h, "remind:1").map((f) => f.status)).toEqual(["ok", "missed"]);
    expect(reminderTexts()).toEqual([]);
    // Nor does the next start take it for a time missed while hermes was down.
    await h.stop();
    hermes = await h.restart();
    expect(firings(hermes, "remind:1").map((f) => f.status)).toEqual(["ok", "missed"]);
    expect(reminderTexts()).toEqual([]);
  });

  it("marks a run a killed hermes left going as interrupted, not running for good; one resumed and sent as ok", async () => {
    const dir = withReminders((schedules, db) => {
      schedules.claim("briefing", Date.now() - 3_600_000); // running when the power went
      // Another, whose run the next start resumed and finished before the schedules started.
      const firing = schedules.claim("briefing", Date.now() - 1_800_000) as number;
      const history = new HistoryStore(db);
      history.createRun("run-resumed", history.activeSession("cron:briefing").id, "cron", { input: "Brief me.", channel: "cli:x" });
      history.endRun("run-resumed", "done", "done", "Here is your brief.");
      history.markReplySent("run-resumed");
      schedules.setRun(firing, "run-resumed");
      // And one whose run ended done while its reply was being delivered when hermes was killed: not sent.
      const cut = schedules.claim("briefing", Date.now() - 900_000) as number;
      history.createRun("run-unsent", history.activeSession("cron:briefing").id, "cron", { input: "Brief me.", channel: "cli:x" });
      history.endRun("run-unsent", "done", "done", "Another brief.");
      schedules.setRun(cut, "run-unsent");
    });
    const job = { name: "briefing", schedule: "0 7 * * *", prompt: "Brief me.", deliver: `telegram:${OWNER}` };
    hermes = await useHermes(settings({ jobs: [job] }), { dir });
    await hermes.waitForLog(
      (l) => String(l.msg).startsWith("scheduled runs a stopped hermes left unfinished are settled") && l.firings === 3,
    );
    expect(firings(hermes, "briefing").map((f) => f.status)).toEqual(["interrupted", "ok", "interrupted"]);
    expect((await hermes.cli(["schedules", "list"])).stdout).toMatch(/briefing .*last: interrupted/s);
  });

  it("a job's run resumed after a restart (approved then) shows as ok once its reply is out, not running until the next start", async () => {
    model.script({ toolCalls: [{ name: "shell", arguments: { command: "echo brief >> ledger.txt" } }] });
    model.respond(() => ({ text: "Brief, after your yes." }));
    const job = { name: "briefing", schedule: "0 7 * * *", prompt: "Brief me.", deliver: `telegram:${OWNER}` };
    const h = await useHermes(settings({ jobs: [job] }, { tools: { enabled: ["clock", "shell"] } }));
    hermes = h;
    void h.cli(["schedules", "run", "briefing"]).catch(() => undefined); // cut off by the kill below
    const request = await telegram.waitFor((c) => c.method === "sendMessage" && Boolean(c.params.reply_markup));
    await h.kill();
    hermes = await h.restart();
    const mark = telegram.calls.length;
    const button = (request.params.reply_markup as { inline_keyboard: { callback_data: string }[][] }).inline_keyboard[0]?.[0];
    telegram.press(OWNER, OWNER, request.result.message_id as number, button?.callback_data ?? "");
    await telegram.waitFor((c) => c.method === "sendMessage" && c.params.text === "Brief, after your yes.", mark);
    const sent = () => readDb(h.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM runs WHERE reply_sent_at IS NOT NULL").pluck().get());
    await waitFor(() => sent() === 1, { message: "the resumed run's reply marked sent" });
    expect((await hermes.cli(["schedules", "list"])).stdout).toMatch(/briefing .*last: ok/s);
    expect(firings(hermes, "briefing").map((f) => f.status)).toEqual(["ok"]);
  });

  it("catches up the first downtime of a job a reload added", async () => {
    model.respond(() => ({ text: "caught up" }));
    const h = await useHermes(settings({ jobs: [] }));
    hermes = h;
    const before = h.logs.length;
    writeConfig(
      h.dir,
      settings({ grace_s: 600, jobs: [{ name: "added", schedule: "*/2 * * * * *", prompt: "Go.", deliver: `telegram:${OWNER}` }] }),
    );
    h.process.kill("SIGHUP");
    await h.waitForLog((l) => l.msg === "config reloaded" && h.logs.indexOf(l) >= before);
    await h.kill();
    await new Promise((r) => setTimeout(r, 2500)); // wall time must pass for a slot to be missed
    hermes = await h.restart();
    await hermes.waitForLog((l) => l.msg === "job firing" && l.job === "added" && l.why === "catch-up after downtime");
  });

  it("catches up a slot missed while hermes was down exactly once", async () => {
    model.respond(() => ({ text: "caught up" }));
    const job = { name: "often", schedule: "*/2 * * * * *", prompt: "Go.", deliver: `telegram:${OWNER}` };
    const h = await useHermes(settings({ jobs: [job], grace_s: 600 }));
    hermes = h;
    await h.waitForLog((l) => l.msg === "job delivered");
    await h.kill();
    const lastBefore = Math.max(...firings(h, "often").map((f) => f.slot_at));
    await new Promise((r) => setTimeout(r, 2500)); // wall time must pass for a slot to be missed
    hermes = await h.restart();
    await hermes.waitForLog((l) => l.msg === "job firing" && l.why === "catch-up after downtime");
    await hermes.stop();
    const slots = firings(h, "often").map((f) => f.slot_at);
    expect(new Set(slots).size).toBe(slots.length);
    const caughtUp = hermes.logs.filter((l) => l.why === "catch-up after downtime");
    expect(caughtUp).toHaveLength(1);
    expect(slots.filter((s) => s > lastBefore).length).toBeGreaterThanOrEqual(1);
  });

  it("retries a job while the model is down, records the error, and tells the owner once", async () => {
    model.respond(() => ({ status: 500 }));
    const job = { name: "briefing", schedule: "0 7 * * *", prompt: "Brief me.", deliver: `telegram:${OWNER}` };
    const base = settings({ jobs: [job], retries: 1, retry_delay_s: 0.1 });
    hermes = await useHermes({ ...base, model: { ...((base as Record<string, unknown>).model as object), retries: 0 } });
    const first = await hermes.cli(["schedules", "run", "briefing"]);
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(/briefing: error/);
    expect(model.requests).toHaveLength(2);
    await hermes.cli(["schedules", "run", "briefing"]);
    const told = telegram.messagesTo(OWNER).filter((c) => String(c.params.text).includes('The scheduled job "briefing" could not run'));
    expect(told).toHaveLength(1);
    expect(firings(hermes, "briefing").map((f) => f.status)).toEqual(["error", "error"]);
  });

  it("rejects a bad cron expression and a delivery target whose connector is off, at load", async () => {
    const { parseConfig } = await import("../../../src/config/load.js");
    const text = `connectors:\n  cron:\n    jobs:\n      - name: bad\n        schedule: "61 * * * *"\n        prompt: hi\n        deliver: discord:1\n`;
    let message = "";
    try {
      parseConfig(text, "h.yaml", {});
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/h\.yaml:5:\d+: connectors\.cron\.jobs\.0\.schedule: invalid cron expression "61 \* \* \* \*"/);
    expect(message).toMatch(
      /h\.yaml:7:\d+: connectors\.cron\.jobs\.0\.deliver: delivers to discord, but connectors\.discord is not enabled/,
    );
  });
});
