/** Time zones and cron expressions as the config checks them, and the zone a config without one gets. */
import { readFileSync, readlinkSync } from "node:fs";
import { Cron } from "croner";

let zones: Set<string> | undefined;
/** Known names are looked up (2 ms); only others (aliases such as UTC) build a formatter, whose first use costs ~30 ms. */
export function isTimeZone(zone: string): boolean {
  zones ??= new Set([...Intl.supportedValuesOf("timeZone"), "UTC", "Etc/UTC", "GMT", "Etc/GMT"]);
  if (zones.has(zone)) return true;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

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
  const named = (zone: string | undefined) => (zone && isTimeZone(zone) ? zone : undefined);
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
