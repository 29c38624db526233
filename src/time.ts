/**
 * Local times in a configured IANA zone, without a timezone library: Intl does the zone rules, or, when
 * the process itself runs in the zone (`hermes start` sets TZ to the configured one), Date's own local
 * fields do. The first Intl date formatter pages in ~7 MB of ICU data that then stay resident, so the
 * paths taken at every turn (the time note, the cron schedules) avoid it in the configured zone.
 */
import { Cron, type CronCallback, type CronOptions } from "croner";
import { namesRealTime } from "./real-time.js";

interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** A cached Intl.DateTimeFormat: building one costs far more than formatting with it. Throws for an unknown zone. */
export function dateFormat(locale: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale} ${JSON.stringify(options)}`;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, options);
    formatters.set(key, f);
  }
  return f;
}

/** True when the process clock runs in `zone`: Date's local fields are then that zone's. */
export function isProcessZone(zone: string): boolean {
  return process.env.TZ === zone;
}

/** The zone to give croner: none when the process runs in it (croner then counts in local time, without Intl). */
export function cronZone(zone: string): string | undefined {
  return isProcessZone(zone) ? undefined : zone;
}

/**
 * A croner schedule in `zone` (see cronZone): every schedule of the daemon is made here, so none can forget it.
 * Lists and ranges of fixed times (`30 2,14 * * *`) count as fixed times across daylight-saving changes, as a
 * single time does: a slot in the skipped hour runs at its end, one in the repeated hour runs once. (croner's
 * default counts only a single minute and hour so: it dropped 02:30 of `30 2,14` in spring and ran it twice
 * in autumn.)
 */
export function zonedCron(pattern: string | Date, zone: string, options: CronOptions = {}, run?: CronCallback): Cron {
  const settings: CronOptions = { fixedTimeRule: "no-wildcard", ...options, timezone: cronZone(zone) };
  return run ? new Cron(pattern, settings, run) : new Cron(pattern, settings);
}

function fieldsIn(date: Date, timeZone: string): Fields {
  if (isProcessZone(timeZone)) {
    return {
      year: date.getFullYear(),
      month: date.getMonth() + 1,
      day: date.getDate(),
      hour: date.getHours(),
      minute: date.getMinutes(),
      second: date.getSeconds(),
    };
  }
  const f = dateFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  });
  const parts = Object.fromEntries(f.formatToParts(date).map((p) => [p.type, p.value]));
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour) % 24,
    minute: Number(parts.minute),
    second: Number(parts.second),
  };
}

function asUtc(f: Fields): number {
  return Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second);
}

/**
 * The instant at which the wall clock in `timeZone` shows the given fields. A time the clock shows twice
 * (the repeated hour in autumn) is its first instant; a time it skips (spring's gap) moves forward by the
 * gap, as the clock would show it had it not jumped (Berlin's 02:30 on that day is 03:30).
 */
export function zonedToUtc(f: Fields, timeZone: string): Date {
  const wall = asUtc(f);
  const offsetAt = (t: number) => asUtc(fieldsIn(new Date(t), timeZone)) - t;
  // The offsets a day either side, and at the wall time read as UTC: every change near it is among them.
  const candidates = [...new Set([-DAY_MS, 0, DAY_MS].map((d) => wall - offsetAt(wall + d)))];
  const exact = candidates.filter((t) => asUtc(fieldsIn(new Date(t), timeZone)) === wall);
  return new Date(exact.length > 0 ? Math.min(...exact) : Math.max(...candidates));
}

const DAY_MS = 86_400_000;

/**
 * Reads a local date-time the way a model writes one: "2026-11-30 18:00", "2026-11-30T18:00:00", or just
 * "18:00" (the next time the clock shows it). Returns undefined for anything else.
 */
export function parseLocalDateTime(text: string, timeZone: string, now: Date): Date | undefined {
  const full = text.trim().match(/^(\d{4})-(\d{2})-(\d{2})[T ](\d{1,2}):(\d{2})(?::(\d{2}))?$/);
  if (full) {
    const [, y, mo, d, h, mi, s] = full.map(Number) as number[];
    const fields = { year: y as number, month: mo as number, day: d as number, hour: h as number, minute: mi as number, second: s || 0 };
    return namesRealTime(fields.year, fields.month, fields.day, fields.hour, fields.minute, fields.second)
      ? zonedToUtc(fields, timeZone)
      : undefined;
  }
  const clock = text.trim().match(/^(\d{1,2}):(\d{2})$/);
  if (!clock || Number(clock[1]) > 23 || Number(clock[2]) > 59) return undefined;
  const today = fieldsIn(now, timeZone);
  const at = zonedToUtc({ ...today, hour: Number(clock[1]), minute: Number(clock[2]), second: 0 }, timeZone);
  if (at.getTime() > now.getTime()) return at;
  const tomorrow = new Date(Date.UTC(today.year, today.month - 1, today.day + 1));
  return zonedToUtc(
    {
      year: tomorrow.getUTCFullYear(),
      month: tomorrow.getUTCMonth() + 1,
      day: tomorrow.getUTCDate(),
      hour: Number(clock[1]),
      minute: Number(clock[2]),
      second: 0,
    },
    timeZone,
  );
}

/** "tomorrow, Mon 30 Nov, 18:00 CET": a time in words, so a wrong guess is visible to the owner. */
export function describeTime(date: Date, timeZone: string, now: Date): string {
  const day = dateFormat("en-GB", { timeZone, weekday: "short", day: "numeric", month: "short" }).format(date).replace(",", "");
  const time = dateFormat("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", timeZoneName: "short" }).format(date);
  const a = fieldsIn(date, timeZone);
  const b = fieldsIn(now, timeZone);
  const days = Math.round((Date.UTC(a.year, a.month - 1, a.day) - Date.UTC(b.year, b.month - 1, b.day)) / 86_400_000);
  const relative = days === 0 ? "today, " : days === 1 ? "tomorrow, " : "";
  const year = a.year !== b.year ? ` ${a.year}` : "";
  return `${relative}${day}${year}, ${time}`;
}

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const two = (n: number) => String(n).padStart(2, "0");

/** "Tuesday 1 December 2026, 13:51 UTC+01:00": the time note of every turn, for the model. */
export function longDateTime(date: Date, timeZone: string): string {
  const f = fieldsIn(date, timeZone);
  const wall = asUtc(f);
  const offset = Math.round((wall - Math.floor(date.getTime() / 1000) * 1000) / 60_000);
  const sign = offset < 0 ? "-" : "+";
  const zone = offset === 0 ? "UTC" : `UTC${sign}${two(Math.floor(Math.abs(offset) / 60))}:${two(Math.abs(offset) % 60)}`;
  const weekday = WEEKDAYS[new Date(wall).getUTCDay()];
  return `${weekday} ${f.day} ${MONTHS[f.month - 1]} ${f.year}, ${two(f.hour)}:${two(f.minute)} ${zone}`;
}
