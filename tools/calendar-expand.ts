import ICAL from "ical.js";
import { dateFormat, zonedToUtc } from "../src/time.js";
import type { Component } from "./calendar-read.js";
import { resolveZone } from "./calendar-zones.js";

type Time = InstanceType<typeof ICAL.Time>;
type Event = InstanceType<typeof ICAL.Event>;

interface Common {
  summary: string;
  location?: string;
}
/** All-day events are dates (YYYY-MM-DD, last day inclusive); timed events are instants. */
export type Occurrence = Common & ({ allDay: true; firstDay: string; lastDay: string } | { allDay: false; start: Date; end: Date });

/** The days asked for, as dates in the owner's zone and as the instants that bound them. */
export interface Range {
  fromDay: string;
  /** Exclusive. */
  toDay: string;
  start: Date;
  end: Date;
  zone: string;
}

export interface Expanded {
  events: Occurrence[];
  problems: string[];
}

/** About 80 years of a daily series; each step costs some 50 µs. */
const MAX_STEPS = 30_000;

/** Every occurrence in the range of every event of the calendars; an event that cannot be read is named in `problems`. */
export function expandCalendars(calendars: Component[], range: Range): Expanded {
  const out: Expanded = { events: [], problems: [] };
  const unknownZones = new Set<string>();
  const ctx: Ctx = { range, unknownZones };
  for (const cal of calendars) {
    for (const { event, moved } of groupSeries(cal, out.problems)) {
      try {
        out.events.push(...expandEvent(event, moved, ctx));
      } catch (err) {
        out.problems.push(`an event "${title(event)}" could not be read (${(err as Error).message.slice(0, 120)})`);
      }
    }
  }
  for (const z of unknownZones) out.problems.push(`unknown time zone "${z}": its times were read in ${range.zone}`);
  return out;
}

/** Each series with its moved occurrences; a moved occurrence whose series is not in the file stands alone. */
function groupSeries(cal: Component, problems: string[]): { event: Event; moved: Event[] }[] {
  const all: { event: Event; uid: string; isMoved: boolean }[] = [];
  for (const c of cal.getAllSubcomponents("vevent")) {
    try {
      const event = new ICAL.Event(c);
      all.push({ event, uid: event.uid ?? "", isMoved: event.isRecurrenceException() });
    } catch (err) {
      problems.push(`an event could not be read (${(err as Error).message.slice(0, 120)})`);
    }
  }
  const series = new Map<string, { event: Event; moved: Event[] }>();
  all.forEach((e, i) => {
    if (!e.isMoved) series.set(e.uid || `#${i}`, { event: e.event, moved: [] });
  });
  all.forEach((e, i) => {
    if (!e.isMoved) return;
    const master = e.uid ? series.get(e.uid) : undefined;
    if (master) master.moved.push(e.event);
    else series.set(`#${i}`, { event: e.event, moved: [] });
  });
  return [...series.values()];
}

interface Ctx {
  range: Range;
  unknownZones: Set<string>;
}

function title(e: Event): string {
  return (e.summary ?? "").trim() || "(no title)";
}

function expandEvent(event: Event, moved: Event[], ctx: Ctx): Occurrence[] {
  const start = event.startDate;
  if (!start) throw new Error("no DTSTART");
  const out: Occurrence[] = [];
  for (const m of moved) if (!isCancelled(m)) pushSingle(out, m, ctx);
  if (!event.isRecurring()) {
    if (!event.isRecurrenceException() || !isCancelled(event)) pushSingle(out, event, ctx);
    return out;
  }
  const replaced = new Set(moved.map((m) => occurrenceKey(m.recurrenceId, zoneOf(m, "recurrence-id"), start.isDate, ctx)));
  const tzid = zoneOf(event, "dtstart");
  const duration = durationOf(event, tzid, ctx);
  const skipBefore = addDays(ctx.range.fromDay, -2 - Math.ceil(duration.toSeconds() / 86_400));
  const it = event.iterator();
  for (let item = it.next(), step = 0; item; item = it.next(), step++) {
    // an RDATE;VALUE=PERIOD repetition comes as a period: its start is the occurrence
    const next = (item as unknown) instanceof ICAL.Period ? (item as unknown as InstanceType<typeof ICAL.Period>).start : item;
    if (step >= MAX_STEPS) throw new Error(`more than ${MAX_STEPS} repetitions before the range`);
    if (ymd(next) < skipBefore) continue; // ends days before the range: no need to place it in time
    if (start.isDate ? ymd(next) >= ctx.range.toDay : instant(next, tzid, ctx) >= ctx.range.end) break;
    if (replaced.has(occurrenceKey(next, tzid, start.isDate, ctx))) continue;
    const end = next.clone();
    end.addDuration(duration);
    push(out, event, next, end, tzid, tzid, ctx);
  }
  return out;
}

/** Wall-clock length, unless start and end are in different zones (then the real time between them). */
function durationOf(event: Event, tzid: string | undefined, ctx: Ctx): InstanceType<typeof ICAL.Duration> {
  const endZone = zoneOf(event, "dtend");
  if (!endZone || endZone === tzid || event.startDate.isDate || !event.endDate) return event.duration;
  const seconds = (instant(event.endDate, endZone, ctx).getTime() - instant(event.startDate, tzid, ctx).getTime()) / 1000;
  return ICAL.Duration.fromSeconds(Math.max(0, seconds));
}

function isCancelled(e: Event): boolean {
  return String(e.component.getFirstPropertyValue("status") ?? "").toUpperCase() === "CANCELLED";
}

function pushSingle(out: Occurrence[], e: Event, ctx: Ctx): void {
  const start = e.startDate;
  if (!start) throw new Error("no DTSTART");
  push(out, e, start, e.endDate ?? start, zoneOf(e, "dtstart"), zoneOf(e, "dtend"), ctx);
}

function push(out: Occurrence[], e: Event, s: Time, end: Time, startZone: string | undefined, endZone: string | undefined, ctx: Ctx) {
  const summary = title(e) + (isCancelled(e) ? " (cancelled)" : "");
  const location = (e.location ?? "").trim() || undefined;
  const { range } = ctx;
  if (s.isDate) {
    const firstDay = ymd(s);
    const lastDay = end.isDate && ymd(end) > firstDay ? addDays(ymd(end), -1) : firstDay;
    if (firstDay < range.toDay && lastDay >= range.fromDay) out.push({ allDay: true, firstDay, lastDay, summary, location });
    return;
  }
  const a = instant(s, startZone, ctx);
  const b = end.isDate ? a : instant(end, endZone ?? startZone, ctx);
  const to = b < a ? a : b;
  if (a < range.end && (to > range.start || a >= range.start)) out.push({ allDay: false, start: a, end: to, summary, location });
}

function zoneOf(e: Event, prop: string): string | undefined {
  const p = e.component.getFirstProperty(prop);
  const tzid = p?.getParameter("tzid");
  return typeof tzid === "string" ? tzid : undefined;
}

/** A time the file's own VTIMEZONE (or Z) places is exact; otherwise its TZID is resolved, or it is the owner's local time. */
function instant(t: Time, tzid: string | undefined, ctx: Ctx): Date {
  if (t.zone && t.zone !== ICAL.Timezone.localTimezone) return new Date(t.toUnixTime() * 1000);
  let zone = ctx.range.zone;
  if (tzid) {
    const resolved = resolveZone(tzid);
    if (resolved) zone = resolved;
    else ctx.unknownZones.add(tzid);
  }
  return zonedToUtc({ year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute, second: t.second }, zone);
}

/**
 * How an occurrence and the RECURRENCE-ID that moves it are matched: by date for an all-day series (Exchange
 * writes the id of an all-day occurrence as local midnight), else by instant.
 */
function occurrenceKey(t: Time | null, tzid: string | undefined, allDay: boolean, ctx: Ctx): string {
  if (!t) return "";
  if (!allDay) return t.isDate ? ymd(t) : String(instant(t, tzid, ctx).getTime());
  if (t.isDate || t.zone !== ICAL.Timezone.utcTimezone) return ymd(t);
  return localDay(instant(t, tzid, ctx), ctx.range.zone);
}

function ymd(t: Time): string {
  return `${String(t.year).padStart(4, "0")}-${String(t.month).padStart(2, "0")}-${String(t.day).padStart(2, "0")}`;
}

export function addDays(day: string, n: number): string {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + n)).toISOString().slice(0, 10);
}

export function localDay(at: Date, zone: string): string {
  return dateFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(at);
}

export function dayStart(day: string, zone: string): Date {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  return zonedToUtc({ year: y, month: m, day: d, hour: 0, minute: 0, second: 0 }, zone);
}
