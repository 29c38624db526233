import { createRequire } from "node:module";
import { zonedToUtc } from "../src/time.js";

type WindowsIana = typeof import("windows-iana");
let windowsTable: WindowsIana | undefined;
/** The CLDR table costs ~40 ms to load: only a calendar that uses a Windows name pays for it. */
function findIana(name: string): string[] {
  windowsTable ??= createRequire(import.meta.url)("windows-iana") as WindowsIana;
  return windowsTable.findIana(name);
}

/**
 * Names for a TZID that the file itself does not define, as calendar programs write them: IANA names
 * (America/Vancouver), Windows names (W. Europe Standard Time, mapped with the CLDR table), Outlook display
 * names ("(UTC-05:00) Eastern Time (US & Canada)"), and bare offsets (UTC+01). Undefined when unknown.
 */
export function resolveZone(tzid: string): string | undefined {
  if (resolved.has(tzid)) return resolved.get(tzid);
  const name = tzid.trim().replace(/^"|"$/g, "");
  const zone = ianaName(name) ?? windowsName(name) ?? displayName(name) ?? offsetName(name);
  if (resolved.size > 1000) resolved.clear();
  resolved.set(tzid, zone);
  return zone;
}

/** Every occurrence of a series asks again: the answer is kept. */
const resolved = new Map<string, string | undefined>();

let known: Map<string, string> | undefined;
function ianaZones(): Map<string, string> {
  known ??= new Map(Intl.supportedValuesOf("timeZone").map((z) => [z.toLowerCase(), z]));
  return known;
}

function isZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function ianaName(name: string): string | undefined {
  // Mozilla and Lightning prefix names: /mozilla.org/20050126_1/America/New_York
  const bare = name.replace(/^\/?(?:[\w.-]+\.[a-z]{2,}\/[\w.-]+\/)/i, "");
  if (!/^[A-Za-z]+(?:\/[\w+-]+)+$|^UTC$|^GMT$/.test(bare)) return undefined;
  return ianaZones().get(bare.toLowerCase()) ?? (isZone(bare) ? bare : undefined);
}

function windowsName(name: string): string | undefined {
  const iana = findIana(name)[0];
  return iana && isZone(iana) ? iana : undefined;
}

/**
 * "(UTC+01:00) Amsterdam, Berlin, …" or a bare "Amsterdam, Belgrade, Berlin, …": the Windows name behind the
 * label, else a listed city; checked against the label's offset when it states one.
 */
function displayName(name: string): string | undefined {
  const m = name.match(/^\((?:UTC|GMT)\s*(?:([+-])(\d{1,2}):?(\d{2}))?\)\s*(.+)$/i);
  if (!m && !/[,(]/.test(name)) return undefined;
  const offset = !m ? undefined : m[1] ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  const label = m ? (m[4] as string) : name;
  const candidates = label
    .split(/[,;:]/)
    .map((s) => s.trim())
    .flatMap((part) => [`${part.replace(/\s*\(.*?\)\s*/g, "").replace(/ Time$/, "")} Standard Time`, part]);
  for (const c of candidates) {
    const zone = windowsName(c) ?? cityZone(c);
    if (zone && (offset === undefined || hasStandardOffset(zone, offset))) return zone;
  }
  if (/coordinated universal time/i.test(label)) return "UTC";
  return offset === undefined ? undefined : fixedOffset(offset);
}

function cityZone(city: string): string | undefined {
  const key = `/${city.replace(/\s+/g, "_").toLowerCase()}`;
  for (const [lower, zone] of ianaZones()) if (lower.endsWith(key)) return zone;
  return undefined;
}

/** The zone's offset in January or July (whichever is its winter) equals the label's offset. */
function hasStandardOffset(zone: string, minutes: number): boolean {
  return [0, 6].some((month) => offsetAt(zone, Date.UTC(2021, month, 15)) === minutes);
}

function offsetAt(zone: string, at: number): number {
  const d = new Date(at);
  const wall = zonedToUtc(
    { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: 12, minute: 0, second: 0 },
    zone,
  );
  return Math.round((Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), 12) - wall.getTime()) / 60_000);
}

function offsetName(name: string): string | undefined {
  const m = name.match(/^(?:UTC|GMT)\s*([+-])(\d{1,2})(?::?(\d{2}))?$/i);
  if (!m) return undefined;
  return fixedOffset((m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0)));
}

/** Etc/GMT zones have inverted signs and whole hours only. */
function fixedOffset(minutes: number): string | undefined {
  if (minutes === 0) return "UTC";
  if (minutes % 60 !== 0 || Math.abs(minutes) > 14 * 60) return undefined;
  const hours = minutes / 60;
  return `Etc/GMT${hours > 0 ? "-" : "+"}${Math.abs(hours)}`;
}
