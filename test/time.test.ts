import { Cron } from "croner";
import { afterEach, describe, expect, it } from "vitest";
import { cronZone, describeTime, isProcessZone, longDateTime, parseLocalDateTime, zonedToUtc } from "../src/time.js";

// Each instant just before, at and after a change of offset, and one ordinary one.
const INSTANTS = [
  "2026-03-29T00:59:59Z", // Berlin: the last second of CET
  "2026-03-29T01:00:00Z", // Berlin: 03:00 CEST
  "2026-10-25T00:30:00Z", // Berlin: 02:30 CEST, the first of the two
  "2026-10-25T01:30:00Z", // Berlin: 02:30 CET, the second
  "2026-03-08T07:30:00Z", // New York: 03:30 EDT, just after 02:00 was skipped
  "2026-11-01T06:30:00Z", // New York: 01:30 EST, the second one
  "2026-12-31T23:59:30Z", // a new year somewhere east of UTC
  "2026-07-14T12:00:00Z",
].map((s) => new Date(s));
const ZONES = ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "UTC"];
const WALLS = ["2026-03-29 02:30", "2026-10-25 02:30", "2026-03-08 02:15", "2026-11-01 01:30", "2026-07-14 09:05", "07:00"];

function everything(zone: string) {
  const now = new Date("2026-07-14T12:00:00Z");
  return {
    long: INSTANTS.map((d) => longDateTime(d, zone)),
    described: INSTANTS.map((d) => describeTime(d, zone, now)),
    walls: WALLS.map((w) => parseLocalDateTime(w, zone, now)?.toISOString()),
    utc: zonedToUtc({ year: 2026, month: 3, day: 29, hour: 2, minute: 30, second: 0 }, zone).toISOString(),
  };
}

describe("local times with and without Intl", () => {
  const saved = process.env.TZ;
  afterEach(() => {
    process.env.TZ = saved;
  });

  it("are the same whether the process runs in the zone (Date's fields) or elsewhere (Intl)", () => {
    for (const zone of ZONES) {
      process.env.TZ = "Pacific/Chatham"; // neither of them, with an odd offset of its own
      expect(isProcessZone(zone)).toBe(false);
      const viaIntl = everything(zone);
      process.env.TZ = zone;
      expect(isProcessZone(zone)).toBe(true);
      expect(everything(zone), zone).toEqual(viaIntl);
    }
  });

  it("write the time note with the offset of the moment", () => {
    process.env.TZ = "Europe/Berlin";
    const [lastCet, firstCest, , , , , newYear] = INSTANTS as Date[];
    expect(longDateTime(lastCet as Date, "Europe/Berlin")).toBe("Sunday 29 March 2026, 01:59 UTC+01:00");
    expect(longDateTime(firstCest as Date, "Europe/Berlin")).toBe("Sunday 29 March 2026, 03:00 UTC+02:00");
    expect(longDateTime(newYear as Date, "Asia/Kolkata")).toBe("Friday 1 January 2027, 05:29 UTC+05:30");
    expect(longDateTime(newYear as Date, "America/New_York")).toBe("Thursday 31 December 2026, 18:59 UTC-05:00");
    expect(longDateTime(newYear as Date, "UTC")).toBe("Thursday 31 December 2026, 23:59 UTC");
  });

  it("give croner no zone when the process runs in it, so it counts in local time", () => {
    process.env.TZ = "Europe/Berlin";
    expect(cronZone("Europe/Berlin")).toBeUndefined();
    expect(cronZone("America/New_York")).toBe("America/New_York");
  });

  it("leave croner's runs as they were across both changes of offset", () => {
    for (const zone of ["Europe/Berlin", "America/New_York"]) {
      process.env.TZ = zone;
      for (const [pattern, from] of [
        ["30 2 * * *", "2026-03-07T12:00:00Z"],
        ["30 2 * * *", "2026-03-28T12:00:00Z"],
        ["30 1 * * *", "2026-10-24T12:00:00Z"],
        ["30 1 * * *", "2026-10-31T12:00:00Z"],
        ["0 7 * * 1-5", "2026-03-27T12:00:00Z"],
      ] as const) {
        const runs = (timezone?: string) =>
          new Cron(pattern, { paused: true, timezone }).nextRuns(4, new Date(from)).map((d) => d.toISOString());
        expect(runs(cronZone(zone)), `${zone} ${pattern} from ${from}`).toEqual(runs(zone));
      }
    }
  });
});
