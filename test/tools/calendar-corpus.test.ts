// The calendar tool against real-world ICS files (test/fixtures/calendar, sources in its README). Expected
// titles and local times were worked out by hand from the files; the process runs in UTC while the owner's
// zone is configured west (New York) or east (Berlin) of it, so a time read in the process's zone shows up wrong.
process.env.TZ = "UTC";

import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/schema.js";
import { openStore } from "../../src/store/store.js";
import { loadTools } from "../../src/tools/registry.js";
import type { AnyTool } from "../../src/tools/types.js";

const DIR = join(import.meta.dirname, "../fixtures/calendar");
const NY = "America/New_York";
const BERLIN = "Europe/Berlin";
const store = openStore(":memory:");
afterAll(() => store.close());

async function calendar(zone: string, sources: string[]): Promise<(args: unknown) => Promise<string>> {
  const config = configSchema().parse({ timezone: zone, tools: { calendar: { sources } } });
  const { tools } = await loadTools(["calendar"], { config, store, now: () => new Date("2026-12-01T12:00:00Z") });
  const tool = tools.get("calendar") as AnyTool;
  const ctx = { signal: new AbortController().signal, sessionKey: "cli:t", channel: "cli:t", runId: "r", callId: "c" };
  return (args) => tool.run(tool.input.parse(args), ctx);
}

interface Case {
  file: string;
  from: string;
  days: number;
  want: Record<string, string[]>;
  /** What the result must say could not be read (after the events). */
  note?: RegExp;
}

const cases: Record<string, Case[]> = {
  "time zones the file does not define": [
    {
      // Outlook on the web: display names, no VTIMEZONE. Sydney is on AEDT (+11) from 4 Oct 2020, New York
      // on EDT (-4) until 1 Nov, EST (-5) after. TEST2 repeats Thu/Fri; its DTSTART (Mon 2 Nov) is off the rule,
      // which RFC 5545 leaves undefined, and like Outlook only the Thu/Fri occurrences are listed. No UIDs.
      file: "owa-display-names.ics",
      from: "2020-10-27",
      days: 11,
      want: {
        [NY]: [
          "Tue 27 Oct 22:30–00:00 TEST Syd", // 13:30 AEDT = 02:30Z = 22:30 EDT the day before
          "Wed 28 Oct 13:30–15:00 TEST",
          "Mon 2 Nov 13:30–15:00 TEST 3",
          "Thu 5 Nov 13:30–15:00 TEST2",
          "Fri 6 Nov 13:30–15:00 TEST2",
        ],
        [BERLIN]: [
          "Wed 28 Oct 03:30–05:00 TEST Syd", // 02:30Z in CET (+1 from 25 Oct)
          "Wed 28 Oct 18:30–20:00 TEST", // 17:30Z
          "Mon 2 Nov 19:30–21:00 TEST 3", // 13:30 EST = 18:30Z
          "Thu 5 Nov 19:30–21:00 TEST2",
          "Fri 6 Nov 19:30–21:00 TEST2",
        ],
      },
    },
    {
      // Starts 12:00 "(UTC-05:00) Eastern Time (US and Canada)" (EDT, 16:00Z), ends 13:00 America/Los_Angeles
      // (PDT, 20:00Z); daily, 10 times, without the 12:00 occurrences of 8 and 10 July.
      file: "display-name-and-iana-no-vtimezone.ics",
      from: "2015-07-06",
      days: 5,
      want: {
        [NY]: [
          "Mon 6 Jul 12:00–16:00 Treasure Hunting",
          "Tue 7 Jul 12:00–16:00 Treasure Hunting",
          "Thu 9 Jul 12:00–16:00 Treasure Hunting",
        ],
        [BERLIN]: [
          "Mon 6 Jul 18:00–22:00 Treasure Hunting",
          "Tue 7 Jul 18:00–22:00 Treasure Hunting",
          "Thu 9 Jul 18:00–22:00 Treasure Hunting",
        ],
      },
    },
    {
      // Apple Calendar: TZID=America/Vancouver (PDT, -7) and no VTIMEZONE at all; the first event is in UTC.
      file: "iana-no-vtimezone-apple.ics",
      from: "2022-07-04",
      days: 4,
      want: {
        [NY]: [
          "Mon 4 Jul 19:00–19:50 Tentative", // 23:00Z
          "Tue 5 Jul 12:00–13:00 Confirmed", // 09:00 PDT = 16:00Z
          "Wed 6 Jul 16:00–17:00 Cancelled (cancelled)", // STATUS:CANCELLED, 13:00 PDT
          "Thu 7 Jul 12:00–13:00 No Status",
        ],
        [BERLIN]: [
          "Tue 5 Jul 01:00–01:50 Tentative",
          "Tue 5 Jul 18:00–19:00 Confirmed",
          "Wed 6 Jul 22:00–23:00 Cancelled (cancelled)",
          "Thu 7 Jul 18:00–19:00 No Status",
        ],
      },
    },
    {
      // Exchange with its VTIMEZONE blocks left out: Windows names. W. Europe 09:00 CEST = 07:00Z; Pacific
      // 08:30 PDT = 15:30Z; the weekly Tu/Th/Fr/Su series at 12:00 PDT = 19:00Z. One DTSTART line has its
      // value inside the quoted TZID, so that event cannot be read and the result says so.
      file: "windows-ids-no-vtimezone-exchange.ics",
      from: "2020-09-10",
      days: 6,
      want: {
        [NY]: [
          "Thu 10 Sept 03:00–03:30 test",
          "Thu 10 Sept 15:00–15:30 Not the actual summary either @ https://bluejeans.com/7999979999",
          "Fri 11 Sept 15:00–15:30 Not the actual summary either @ https://bluejeans.com/7999979999",
          "Sun 13 Sept 15:00–15:30 Not the actual summary either @ https://bluejeans.com/7999979999",
          "Tue 15 Sept 11:30–12:30 Not the actual summary 1",
          "Tue 15 Sept 15:00–15:30 Not the actual summary either @ https://bluejeans.com/7999979999",
        ],
        [BERLIN]: [
          "Thu 10 Sept 09:00–09:30 test",
          "Thu 10 Sept 21:00–21:30 Not the actual summary either @ https://bluejeans.com/7999979999",
          "Fri 11 Sept 21:00–21:30 Not the actual summary either @ https://bluejeans.com/7999979999",
          "Sun 13 Sept 21:00–21:30 Not the actual summary either @ https://bluejeans.com/7999979999",
          "Tue 15 Sept 17:30–18:30 Not the actual summary 1",
          "Tue 15 Sept 21:00–21:30 Not the actual summary either @ https://bluejeans.com/7999979999",
        ],
      },
      note: /Log Yesterday's Jira time/,
    },
    {
      // khal: a moved occurrence (RECURRENCE-ID) whose series is not in the file, America/Chicago (CDT, -5)
      // with no VTIMEZONE, repeated by RDATE periods every Tuesday 08:00–09:00.
      file: "iana-no-vtimezone-khal.ics",
      from: "2018-03-27",
      days: 8,
      want: {
        [NY]: ["Tue 27 Mar 09:00–10:00 Event", "Tue 3 Apr 09:00–10:00 Event"],
        [BERLIN]: ["Tue 27 Mar 15:00–16:00 Event", "Tue 3 Apr 15:00–16:00 Event"], // 13:00Z in CEST
      },
    },
  ],
  "floating times are the owner's local time": [
    {
      // TripIt: the directions are floating (10:05 wherever the owner is); the flight and the car are UTC.
      file: "floating-tripit.ics",
      from: "2011-10-11",
      days: 1,
      want: {
        [NY]: [
          "Tue 11 Oct – Thu 13 Oct (all day) South San Francisco, CA, October 2011; @ South San Francisco, CA",
          "Tue 11 Oct 10:05–11:05 Directions from SFO to Embassy Suites San Francisco Airport - South San Francisco @ 250 GATEWAY BLVD, South San Francisco, CA, 94080",
          "Tue 11 Oct 10:45–12:55 US403 PHX to SFO @ Phoenix (PHX)", // 14:45Z
          "Tue 11 Oct 13:25–14:25 Pick-up Rental Car: Dollar Rent A Car", // 17:25Z
        ],
        [BERLIN]: [
          "Tue 11 Oct – Thu 13 Oct (all day) South San Francisco, CA, October 2011; @ South San Francisco, CA",
          "Tue 11 Oct 10:05–11:05 Directions from SFO to Embassy Suites San Francisco Airport - South San Francisco @ 250 GATEWAY BLVD, South San Francisco, CA, 94080",
          "Tue 11 Oct 16:45–18:55 US403 PHX to SFO @ Phoenix (PHX)",
          "Tue 11 Oct 19:25–20:25 Pick-up Rental Car: Dollar Rent A Car",
        ],
      },
    },
    {
      // tvcountdown.com: DTSTART;VALUE=DATE-TIME without zone or Z.
      file: "floating-tvcountdown.ics",
      from: "2011-05-05",
      days: 15,
      want: {
        [NY]: [
          "Thu 5 May 22:00–22:30 30 Rock - S05E23 - Respawn",
          "Thu 12 May 20:00–20:30 The Big Bang Theory - S04E23 - The Engagement Reaction",
          "Thu 19 May 20:00–20:30 The Big Bang Theory - S04E24 - The Roomate Transmogrfication",
        ],
        [BERLIN]: [
          "Thu 5 May 22:00–22:30 30 Rock - S05E23 - Respawn",
          "Thu 12 May 20:00–20:30 The Big Bang Theory - S04E23 - The Engagement Reaction",
          "Thu 19 May 20:00–20:30 The Big Bang Theory - S04E24 - The Roomate Transmogrfication",
        ],
      },
    },
    {
      // Apple iCal 1.0: the same 24 hours as floating, UTC, New York (no VTIMEZONE), and two all-day forms.
      // 28 Oct 2002: New York on EST (-5) and Berlin on CET (+1) since 27 Oct.
      file: "floating-mixed-apple.ics",
      from: "2002-10-28",
      days: 1,
      want: {
        [NY]: [
          "Mon 28 Oct (all day) Date Only (Explicit)",
          "Mon 28 Oct (all day) Date Only (Implicit)",
          "Sun 27 Oct 20:20 – Mon 28 Oct 20:20 UTC Timezone",
          "Mon 28 Oct 01:20 – Tue 29 Oct 01:20 No Timezone",
          "Mon 28 Oct 01:20 – Tue 29 Oct 01:20 Inline Timezone",
        ],
        [BERLIN]: [
          "Mon 28 Oct (all day) Date Only (Explicit)",
          "Mon 28 Oct (all day) Date Only (Implicit)",
          "Mon 28 Oct 01:20 – Tue 29 Oct 01:20 No Timezone",
          "Mon 28 Oct 02:20 – Tue 29 Oct 02:20 UTC Timezone",
          "Mon 28 Oct 07:20 – Tue 29 Oct 07:20 Inline Timezone", // 01:20 EST = 06:20Z
        ],
      },
    },
  ],
  "all-day events are dates in the owner's zone": [
    {
      // Google: daily 27–29 Oct, the 28th moved to the 30th. Asking for 28–30 Oct must not list the 27th.
      file: "allday-moved-google.ics",
      from: "2024-10-28",
      days: 3,
      want: {
        [NY]: ["Tue 29 Oct (all day) test whole day moved", "Wed 30 Oct (all day) test whole day moved"],
        [BERLIN]: ["Tue 29 Oct (all day) test whole day moved", "Wed 30 Oct (all day) test whole day moved"],
      },
    },
    {
      // Google: every Saturday from 17 Oct 2020. Sun 18 – Sat 24 holds only the 24th (not the 17th before it).
      file: "allday-weekly-google.ics",
      from: "2020-10-18",
      days: 7,
      want: { [NY]: ["Sat 24 Oct (all day) Fear TWD"], [BERLIN]: ["Sat 24 Oct (all day) Fear TWD"] },
    },
    {
      // Sun 25 – Fri 30 Oct holds no Saturday (not the 31st after it).
      file: "allday-weekly-google.ics",
      from: "2020-10-25",
      days: 6,
      want: { [NY]: ["No events between Sun 25 Oct and Fri 30 Oct."], [BERLIN]: ["No events between Sun 25 Oct and Fri 30 Oct."] },
    },
    {
      // SabreDAV: school holidays 2 Jul – 11 Aug 2018 (DTEND exclusive, so the last day is Fri 10 Aug).
      file: "allday-holidays-sabredav.ics",
      from: "2018-08-10",
      days: 1,
      want: {
        [NY]: ["Mon 2 Jul – Fri 10 Aug (all day) Sommerferien Sachsen"],
        [BERLIN]: ["Mon 2 Jul – Fri 10 Aug (all day) Sommerferien Sachsen"],
      },
    },
    {
      file: "allday-holidays-sabredav.ics",
      from: "2018-08-11",
      days: 1,
      want: { [NY]: ["No events between Sat 11 Aug and Sat 11 Aug."], [BERLIN]: ["No events between Sat 11 Aug and Sat 11 Aug."] },
    },
  ],
  "moved occurrences of all-day series replace the original day": [
    {
      // Exchange: Tue/Thu from 19 Feb 2026; RECURRENCE-ID;TZID=W. Europe Standard Time:20260226T000000 moves
      // Thu 26 Feb to Fri 27 Feb.
      file: "allday-moved-exchange.ics",
      from: "2026-02-24",
      days: 5,
      want: {
        [NY]: ["Tue 24 Feb (all day) Exchange Recurring Test", "Fri 27 Feb (all day) Exchange Recurring Test"],
        [BERLIN]: ["Tue 24 Feb (all day) Exchange Recurring Test", "Fri 27 Feb (all day) Exchange Recurring Test"],
      },
    },
    {
      // The same with TZID=UTC+01, which no VTIMEZONE defines.
      file: "allday-moved-exchange-offset-tzid.ics",
      from: "2026-02-24",
      days: 5,
      want: {
        [NY]: ["Tue 24 Feb (all day) Exchange Recurring Test (offset TZID)", "Fri 27 Feb (all day) Exchange Recurring Test (offset TZID)"],
        [BERLIN]: [
          "Tue 24 Feb (all day) Exchange Recurring Test (offset TZID)",
          "Fri 27 Feb (all day) Exchange Recurring Test (offset TZID)",
        ],
      },
    },
  ],
  "one broken line does not lose the calendar": [
    {
      // Exchange CDO: "BYDAY=MO, TU, WE, TH, FR" with spaces; 10:00 in its own CET/CEST VTIMEZONE (08:00Z).
      file: "byday-spaces-exchange.ics",
      from: "2015-07-03",
      days: 4,
      want: {
        [NY]: ["Fri 3 Jul 04:00–04:30 Sprint 25 Daily Standup", "Mon 6 Jul 04:00–04:30 Sprint 25 Daily Standup"],
        [BERLIN]: ["Fri 3 Jul 10:00–10:30 Sprint 25 Daily Standup", "Mon 6 Jul 10:00–10:30 Sprint 25 Daily Standup"],
      },
    },
    {
      // Google: "RRULE:RRULE:AnythingRandom;FREQ=WEEKLY;BYDAY=…" still means weekly Mon–Fri. Denver is on MST
      // (-7) from 1 Nov 2020: 09:40 = 16:40Z; Budapest (no VTIMEZONE) 07:20 CET = 06:20Z, ending when it starts.
      file: "bad-rrule-google.ics",
      from: "2020-11-02",
      days: 1,
      want: {
        [NY]: ["Mon 2 Nov 01:20 Invalid RRULE property", "Mon 2 Nov 11:40–11:50 Brain Break", "Mon 2 Nov 11:50–12:40 Academic Time"],
        [BERLIN]: ["Mon 2 Nov 07:20 Invalid RRULE property", "Mon 2 Nov 17:40–17:50 Brain Break", "Mon 2 Nov 17:50–18:40 Academic Time"],
      },
    },
    {
      // Sixt (a booking site): "ORGANIZER;CN=Sixt SE" has no value, in a VFREEBUSY; the car pickup still shows.
      // 06:30Z is 08:30 CEST, the "08:30 heures (heure locale)" of its description.
      file: "vfreebusy-organizer-no-value-sixt.ics",
      from: "2019-06-24",
      days: 1,
      want: {
        [NY]: [
          "Mon 24 Jun 02:30–12:30 Sixt : détails de votre réservation @ Sixt Genève Aéroport secteur France, AP de Genève Cointrin Sect(F), 01210 Ferney-Voltaire, FR",
        ],
        [BERLIN]: [
          "Mon 24 Jun 08:30–18:30 Sixt : détails de votre réservation @ Sixt Genève Aéroport secteur France, AP de Genève Cointrin Sect(F), 01210 Ferney-Voltaire, FR",
        ],
      },
      note: /skipped a VFREEBUSY/,
    },
    {
      // Apple: "X-APPLE-RADIUS=49.91307046514149" (no colon) inside the event; the event has no SUMMARY.
      file: "broken-x-apple-line.ics",
      from: "2015-09-05",
      days: 1,
      want: { [NY]: ["Sat 5 Sept 05:00–06:00 (no title)"], [BERLIN]: ["Sat 5 Sept 11:00–12:00 (no title)"] },
    },
    {
      // Podio: quotes inside a quoted ALTREP parameter, and a line after END:VCALENDAR. 18:30Z in February.
      file: "podio-trailing-line.ics",
      from: "2022-02-22",
      days: 1,
      want: {
        [NY]: ['Tue 22 Feb 13:30–14:30 Termin 4353 und"so" @ online'],
        [BERLIN]: ['Tue 22 Feb 19:30–20:30 Termin 4353 und"so" @ online'],
      },
    },
    {
      // Exchange and Google: "tzone://Microsoft/Custom" names no zone at all (read in the owner's, and said so);
      // a malformed DTSTAMP and a negative DURATION on an all-day event; a UTC event without an end.
      file: "unknown-zone-bad-lines.ics",
      from: "2021-03-25",
      days: 8,
      want: {
        [NY]: ["Thu 25 Mar 10:35–11:50 [private] @ [private]", "Thu 1 Apr (all day) *masked-away2*", "Thu 1 Apr 15:30 *masked-away*"],
        [BERLIN]: ["Thu 25 Mar 10:35–11:50 [private] @ [private]", "Thu 1 Apr (all day) *masked-away2*", "Thu 1 Apr 21:30 *masked-away*"],
      },
      note: /unknown time zone "tzone:\/\/Microsoft\/Custom"/,
    },
    {
      // A stray "X" line after the event.
      file: "stray-line.ics",
      from: "2014-03-31",
      days: 2,
      want: { [NY]: ["Mon 31 Mar 20:00–21:00 Broken Eevnt"], [BERLIN]: ["Tue 1 Apr 02:00–03:00 Broken Eevnt"] },
      note: /1 unreadable line/,
    },
  ],
  "multi-day timed events say when they end": [
    {
      // DURATION:P1D from 06:00 America/Los_Angeles (PDT): 13:00Z to 13:00Z the next day.
      file: "duration-one-day-google.ics",
      from: "2012-06-30",
      days: 1,
      want: {
        [NY]: ["Sat 30 Jun 09:00 – Sun 1 Jul 09:00 Really long event name thing"],
        [BERLIN]: ["Sat 30 Jun 15:00 – Sun 1 Jul 15:00 Really long event name thing"],
      },
    },
  ],
};

describe("the calendar tool on real-world files, with the process in UTC", () => {
  it("runs in UTC, so only the configured zone can place a time", () => {
    expect(new Date(2020, 0, 1).getTimezoneOffset()).toBe(0);
  });

  for (const [kind, list] of Object.entries(cases)) {
    describe(kind, () => {
      for (const c of list) {
        for (const [zone, lines] of Object.entries(c.want)) {
          it(`${c.file}, ${c.days} day(s) from ${c.from}, owner in ${zone}`, async () => {
            const run = await calendar(zone, [join(DIR, c.file)]);
            const result = (await run({ from: c.from, days: c.days })).split("\n");
            const notes = result.filter((l) => l.startsWith("Could not read everything"));
            expect(result.filter((l) => !notes.includes(l))).toEqual(lines);
            if (c.note) expect(notes.join("\n")).toMatch(c.note);
            else expect(notes).toEqual([]);
          });
        }
      }
    });
  }
});

describe("sources that cannot be read", () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end("<!doctype html><title>Sign in</title>")).listen(0, "127.0.0.1");
    await once(server, "listening");
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/private-token/basic.ics`;
  });
  afterAll(() => server.close());

  it("says which source failed, and the other sources still answer", async () => {
    const run = await calendar(BERLIN, [join(DIR, "missing.ics"), url, join(DIR, "stray-line.ics"), join(DIR, "vfreebusy-zimbra.ics")]);
    const lines = (await run({ from: "2014-04-01", days: 1 })).split("\n");
    expect(lines[0]).toBe("Tue 1 Apr 02:00–03:00 Broken Eevnt");
    expect(lines[1]).toMatch(/^Could not read everything: missing\.ics: cannot read ENOENT; 127\.0\.0\.1:\d+: not an ICS calendar/);
    expect(lines[1]).toContain("stray-line.ics: skipped 1 unreadable line");
    expect(lines[1]).not.toContain("private-token");
  });

  it("fails with every reason when no source can be read", async () => {
    const run = await calendar(NY, [join(DIR, "missing.ics"), url]);
    await expect(run({ from: "2014-04-01" })).rejects.toThrow(/missing\.ics: cannot read ENOENT; 127\.0\.0\.1:\d+: not an ICS calendar/);
  });
});

describe("with the process in a zone of its own (Asia/Kolkata, +05:30)", () => {
  beforeAll(() => {
    process.env.TZ = "Asia/Kolkata";
  });
  afterAll(() => {
    process.env.TZ = "UTC";
  });

  it("floating and all-day events still follow the configured zone", async () => {
    expect(new Date(2020, 0, 1).getTimezoneOffset()).toBe(-330);
    for (const c of [
      ...(cases["floating times are the owner's local time"] ?? []),
      ...(cases["all-day events are dates in the owner's zone"] ?? []),
    ]) {
      for (const [zone, lines] of Object.entries(c.want)) {
        const run = await calendar(zone, [join(DIR, c.file)]);
        expect((await run({ from: c.from, days: c.days })).split("\n"), `${c.file} in ${zone}`).toEqual(lines);
      }
    }
  });
});
