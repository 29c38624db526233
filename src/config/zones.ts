/** Time zones and cron expressions as the config checks them, and the zone a config without one gets. */
import { readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { Cron } from "croner";
import { z } from "./zod.js";

let zones: Set<string> | undefined;
let byLowerCase: Map<string, string> | undefined;

/**
 * `zone` as hermes keeps it, or undefined when it is no time zone. Intl takes a zone's name in any case, but
 * `TZ`, which a started daemon sets to the configured zone, does not: `TZ=europe/berlin` runs the process
 * clock on UTC. So a zone's name in another case ("europe/berlin") becomes its own spelling ("Europe/Berlin").
 * An alias that Intl knows ("US/Eastern") is kept as written: `processZone` gives `TZ` the zone it names.
 * Known names are looked up (2 ms); only others build a formatter, whose first use costs ~30 ms.
 */
export function canonicalZone(zone: string): string | undefined {
  const known = knownZones();
  if (known.has(zone)) return zone;
  byLowerCase ??= new Map([...known].map((name) => [name.toLowerCase(), name]));
  const spelled = byLowerCase.get(zone.toLowerCase());
  if (spelled) return spelled;
  return zone && intlZone(zone) ? zone : undefined;
}

/**
 * What `TZ` is set to for the configured `zone`: the zone as configured, which the shell tool's commands
 * inherit and read from the system's zoneinfo (Asia/Kolkata, not Intl's older Asia/Calcutta, which a system
 * without its legacy links does not have). Only a name that neither Intl's list nor the system's zoneinfo
 * spells so (an alias in another case, us/eastern) becomes the zone Intl names for it.
 */
export function processZone(zone: string): string {
  return knownZones().has(zone) || inZoneinfo(zone) ? zone : (intlZone(zone) ?? zone);
}

/** Whether the system's zoneinfo (TZDIR, else /usr/share/zoneinfo) has a file by exactly this name. */
function inZoneinfo(zone: string): boolean {
  if (zone.startsWith("/") || zone.split("/").includes("..")) return false;
  try {
    return statSync(join(process.env.TZDIR || "/usr/share/zoneinfo", zone)).isFile();
  } catch {
    return false;
  }
}

function knownZones(): Set<string> {
  zones ??= new Set([...Intl.supportedValuesOf("timeZone"), "UTC", "Etc/UTC", "GMT", "Etc/GMT"]);
  return zones;
}

/** The zone Intl takes `zone` for, in its own spelling; undefined when Intl knows no such zone. */
function intlZone(zone: string): string | undefined {
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/** A config's time zone: a name in any case, kept in its own spelling (see canonicalZone). */
export const zoneSetting = () =>
  z
    .string()
    .refine((zone) => canonicalZone(zone) !== undefined, "expected an IANA time zone such as Europe/Berlin")
    .overwrite((zone) => canonicalZone(zone) ?? zone);

/** The expression alone: the zone is checked on its own, and a zone here would load Intl at every start. */
export function cronProblem(expression: string): string | undefined {
  try {
    new Cron(expression, { paused: true });
    return undefined;
  } catch (err) {
    return `invalid cron expression "${expression}": ${(err as Error).message}`;
  }
}

/** TZ as the process was started with: `hermes start` then sets it to the configured zone. */
const startTz = process.env.TZ;

/** The system's zone, read where the system keeps it: asking Intl would page in its data (see src/time.ts). */
export function systemZone(): string {
  const named = (zone: string | undefined) => (zone ? canonicalZone(zone) : undefined);
  const fromEnv = named(startTz?.replace(/^:/, ""));
  if (fromEnv) return fromEnv;
  try {
    const link = named(readlinkSync("/etc/localtime").match(/zoneinfo\/(.+)$/)?.[1]);
    if (link) return link;
  } catch {
    // not a link (or absent): next place
  }
  try {
    const file = named(readFileSync("/etc/timezone", "utf8").trim());
    if (file) return file;
  } catch {
    // absent: Intl decides
  }
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}
