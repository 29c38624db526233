import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type { ToolName } from "../src/config/schema.js";
import { z } from "../src/config/zod.js";
import { ToolError } from "../src/errors.js";
import { namesRealTime } from "../src/real-time.js";
import { dateFormat } from "../src/time.js";
import { defineTool } from "../src/tools/define.js";
import type { ToolDeps } from "../src/tools/types.js";
import { addDays, dayStart, expandCalendars, localDay, type Occurrence, type Range } from "./calendar-expand.js";
import { readCalendar } from "./calendar-read.js";

/** The network code (and ipaddr.js), loaded by the first call: a start does not pay for it. */
const net = () => import("./net.js");

export type { Occurrence } from "./calendar-expand.js";

/** Events in a date range from the owner's ICS files or URLs, recurring events expanded, in the owner's zone. */
export function createTool(_name: ToolName, deps: ToolDeps) {
  const s = deps.config.tools.calendar;
  const zone = deps.config.timezone;
  return defineTool({
    name: "calendar",
    description: 'List the owner\'s calendar events for a day or a few days. Example: {} for today, or {"from": "2026-12-01", "days": 7}.',
    input: z.strictObject({
      from: z
        .string()
        .regex(/^\d{4}-\d{2}-\d{2}$/, "expected YYYY-MM-DD")
        .refine(
          (day) => namesRealTime(...(day.split("-").map(Number) as [number, number, number])),
          "no such day (expected a real date, YYYY-MM-DD)",
        )
        .optional(),
      days: z.int().min(1).max(31).optional(),
    }),
    readOnly: true,
    run: async ({ from, days }, ctx) => {
      if (s.sources.length === 0) throw new ToolError("no calendars configured: add ICS files or URLs to tools.calendar.sources");
      const range = rangeOf(from ?? localDay(deps.now(), zone), days ?? 1, zone);
      const texts = await Promise.allSettled(
        s.sources.map((src) => loadSource(src, ctx.signal, (s.timeout_s ?? 15) * 1000, deps.config.tools.http_get.allow)),
      );
      const { events, notes, failed } = collect(texts, s.sources, range);
      if (failed === s.sources.length) throw new ToolError(notes.join("; "));
      return render(events, notes, range);
    },
  });
}

function rangeOf(fromDay: string, days: number, zone: string): Range {
  const toDay = addDays(fromDay, days);
  return { fromDay, toDay, start: dayStart(fromDay, zone), end: dayStart(toDay, zone), zone };
}

function collect(texts: PromiseSettledResult<string>[], sources: string[], range: Range) {
  const events: Occurrence[] = [];
  const notes: string[] = [];
  let failed = 0;
  texts.forEach((t, i) => {
    const name = sourceName(sources[i] as string);
    if (t.status === "rejected") {
      failed++;
      notes.push(`${name}: ${(t.reason as Error).message}`);
      return;
    }
    const result = expandIcs(t.value, range);
    if (result.unreadable) failed++;
    events.push(...result.events);
    for (const p of result.problems) notes.push(`${name}: ${p}`);
  });
  return { events, notes, failed };
}

/** A URL is named by its host only: private calendar URLs carry secret tokens in their paths. */
function sourceName(source: string): string {
  if (/^https?:\/\//.test(source)) return new URL(source).host;
  return basename(source);
}

async function loadSource(source: string, signal: AbortSignal, timeoutMs: number, allow: string[]): Promise<string> {
  if (/^https?:\/\//.test(source)) return (await net()).fetchConfigured(source, { signal, timeoutMs, maxBytes: 5_000_000, allow });
  return readFile(source, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw new ToolError(`cannot read ${err.code ?? err.message}`);
  });
}

/** Every occurrence of every event in the range, with moved and cancelled occurrences applied; never throws for a bad event. */
function expandIcs(text: string, range: Range): { events: Occurrence[]; problems: string[]; unreadable?: true } {
  let read: ReturnType<typeof readCalendar>;
  try {
    read = readCalendar(text);
  } catch (err) {
    return { events: [], problems: [(err as Error).message], unreadable: true };
  }
  let expanded: ReturnType<typeof expandCalendars>;
  try {
    expanded = expandCalendars(read.calendars, range);
  } catch (err) {
    return { events: [], problems: [`could not be read (${(err as Error).message.slice(0, 120)})`], unreadable: true };
  }
  return { events: expanded.events, problems: [...read.skipped.map((s) => `skipped ${s}`), ...expanded.problems] };
}

function render(events: Occurrence[], notes: string[], range: Range): string {
  const sorted = events.sort((a, b) => sortKey(a, range) - sortKey(b, range));
  const lines = sorted.map((e) => formatEvent(e, range.zone));
  if (lines.length === 0)
    lines.push(`No events between ${fmtDay(range.start, range.zone)} and ${fmtDay(new Date(range.end.getTime() - 1), range.zone)}.`);
  if (notes.length > 0) lines.push(`Could not read everything: ${notes.join("; ")}.`);
  return lines.join("\n");
}

/** By the time each event is under way in the range; on one day, all-day events first. */
function sortKey(e: Occurrence, range: Range): number {
  const from = range.start.getTime();
  return e.allDay ? Math.max(dayStart(e.firstDay, range.zone).getTime(), from) - 1 : Math.max(e.start.getTime(), from);
}

function fmtDay(d: Date, zone: string): string {
  return dateFormat("en-GB", { timeZone: zone, weekday: "short", day: "numeric", month: "short" }).format(d).replace(",", "");
}

function fmtDate(day: string): string {
  return fmtDay(new Date(`${day}T12:00:00Z`), "UTC");
}

function formatEvent(e: Occurrence, zone: string): string {
  const time = (d: Date) => dateFormat("en-GB", { timeZone: zone, hour: "2-digit", minute: "2-digit" }).format(d);
  let when: string;
  if (e.allDay)
    when = e.lastDay === e.firstDay ? `${fmtDate(e.firstDay)} (all day)` : `${fmtDate(e.firstDay)} – ${fmtDate(e.lastDay)} (all day)`;
  else if (e.end.getTime() === e.start.getTime()) when = `${fmtDay(e.start, zone)} ${time(e.start)}`;
  else if (localDay(e.start, zone) === localDay(new Date(Math.max(e.start.getTime(), e.end.getTime() - 1)), zone))
    when = `${fmtDay(e.start, zone)} ${time(e.start)}–${time(e.end)}`;
  else when = `${fmtDay(e.start, zone)} ${time(e.start)} – ${fmtDay(e.end, zone)} ${time(e.end)}`;
  return `${when} ${e.summary}${e.location ? ` @ ${e.location}` : ""}`;
}
