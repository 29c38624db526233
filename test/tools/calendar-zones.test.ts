import { describe, expect, it } from "vitest";
import { resolveZone } from "../../tools/calendar-zones.js";

// TZIDs as they appear, without a VTIMEZONE, in the corpus files and in bug reports.
describe("resolveZone", () => {
  it.each([
    ["America/Vancouver", "America/Vancouver"],
    ["US/Eastern", "US/Eastern"],
    ["W. Europe Standard Time", "Europe/Berlin"], // CLDR windowsZones, territory 001
    ["Central Standard Time", "America/Chicago"],
    ["(UTC-05:00) Eastern Time (US & Canada)", "America/New_York"],
    ['"(UTC-05:00) Eastern Time (US and Canada)"', "America/New_York"],
    ["(GMT+10:00) Canberra, Melbourne, Sydney", "Australia/Melbourne"], // the first listed city IANA knows
    ["(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna", "Europe/Amsterdam"],
    ["Amsterdam, Belgrade, Berlin, Brussels, Budapest, Madrid, Paris, Prague, Stockholm", "Europe/Amsterdam"],
    ["Pacific Time (US & Canada),Tijuana", "America/Los_Angeles"],
    ["(UTC) Coordinated Universal Time", "UTC"],
    ["UTC+01", "Etc/GMT-1"], // Etc/GMT signs are inverted
    ["(UTC-07:00) Arizona", "Etc/GMT+7"], // no city to go by: the stated offset (Arizona keeps no DST)
  ])("%s → %s", (tzid, zone) => {
    expect(resolveZone(tzid)).toBe(zone);
  });

  it("knows nothing of names it cannot place", () => {
    expect(resolveZone("tzone://Microsoft/Custom")).toBeUndefined();
    expect(resolveZone("Customized Time Zone")).toBeUndefined();
  });
});
