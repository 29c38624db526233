import { readFile } from "node:fs/promises";
import ICAL from "ical.js";
import { z } from "zod";
import type { ToolName } from "../src/config/schema.js";
import { ToolError } from "../src/errors.js";
import { zonedToUtc } from "../src/time.js";
import { defineTool } from "../src/tools/define.js";
import type { ToolDeps } from "../src/tools/types.js";
import { fetchConfigured } from "./net.js";

export interface Occurrence {
  start: Date;
  end: Date;
  allDay: boolean;
  summary: string;
  location?: string;
}

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
        .optional(),
      days: z.int().min(1).max(31).optional(),
    }),
    readOnly: true,
    run: async ({ from, days }, ctx) => {
      if (s.sources.length === 0) throw new ToolError("no calendars configured: add ICS files or URLs to tools.calendar.sources");
      const start = startOfDay(from, zone, deps.now());
      const end = new Date(start.getTime() + (days ?? 1) * 86_400_000);
      const texts = await Promise.all(s.sources.map((src) => loadSource(src, ctx.signal, (s.timeout_s ?? 15) * 1000)));
      const events = texts.flatMap((t) => expandIcs(t, start, end)).sort((a, b) => a.start.getTime() - b.start.getTime());
      if (events.length === 0) return `No events between ${fmtDay(start, zone)} and ${fmtDay(new Date(end.getTime() - 1), zone)}.`;
      return events.map((e) => formatEvent(e, zone)).join("\n");
    },
  });
}

function startOfDay(from: string | undefined, zone: string, now: Date): Date {
  if (from) {
    const [y, m, d] = from.split("-").map(Number) as [number, number, number];
    return zonedToUtc({ year: y, month: m, day: d, hour: 0, minute: 0, second: 0 }, zone);
  }
  const parts = new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(now);
  return startOfDay(parts, zone, now);
}

async function loadSource(source: string, signal: AbortSignal, timeoutMs: number): Promise<string> {
  if (/^https?:\/\//.test(source)) return fetchConfigured(source, { signal, timeoutMs, maxBytes: 5_000_000 });
  return readFile(source, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw new ToolError(`cannot read calendar ${source}: ${err.code ?? err.message}`);
  });
}

/** Every occurrence of every event in [start, end), with RECURRENCE-ID exceptions applied. */
export function expandIcs(text: string, start: Date, end: Date): Occurrence[] {
  let root: InstanceType<typeof ICAL.Component>;
  try {
    root = new ICAL.Component(ICAL.parse(text));
  } catch (err) {
    throw new ToolError(`a calendar is not valid ICS: ${(err as Error).message}`);
  }
  for (const tz of root.getAllSubcomponents("vtimezone")) ICAL.TimezoneService.register(tz);
  const all = root.getAllSubcomponents("vevent").map((c) => new ICAL.Event(c));
  const masters = all.filter((e) => !e.isRecurrenceException());
  for (const exception of all.filter((e) => e.isRecurrenceException()))
    masters.find((m) => m.uid === exception.uid)?.relateException(exception);
  const out: Occurrence[] = [];
  for (const event of masters) {
    if (!event.isRecurring()) {
      pushIfInRange(out, event.startDate, event.endDate, event, start, end);
      continue;
    }
    const it = event.iterator();
    for (let next = it.next(), guard = 0; next && guard < 5000; next = it.next(), guard++) {
      if (next.toJSDate() >= end) break;
      const o = event.getOccurrenceDetails(next);
      pushIfInRange(out, o.startDate, o.endDate, o.item, start, end);
    }
  }
  return out;
}

function pushIfInRange(out: Occurrence[], s: ICAL.Time, e: ICAL.Time, item: ICAL.Event, start: Date, end: Date): void {
  const from = s.toJSDate();
  const to = (e ?? s).toJSDate();
  if (to <= start || from >= end) return;
  out.push({ start: from, end: to, allDay: s.isDate, summary: item.summary || "(no title)", location: item.location || undefined });
}

function fmtDay(d: Date, zone: string): string {
  return new Intl.DateTimeFormat("en-GB", { timeZone: zone, weekday: "short", day: "numeric", month: "short" }).format(d).replace(",", "");
}

export function formatEvent(e: Occurrence, zone: string): string {
  const time = (d: Date) => new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour: "2-digit", minute: "2-digit" }).format(d);
  const when = e.allDay ? `${fmtDay(e.start, "UTC")} (all day)` : `${fmtDay(e.start, zone)} ${time(e.start)}–${time(e.end)}`;
  return `${when} ${e.summary}${e.location ? ` @ ${e.location}` : ""}`;
}
