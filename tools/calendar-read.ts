import ICAL from "ical.js";
import { ToolError } from "../src/errors.js";

export type Component = InstanceType<typeof ICAL.Component>;

export interface ReadCalendar {
  /** Every VCALENDAR in the text (a file may hold several). */
  calendars: Component[];
  /** What was left out, in words: "a VFREEBUSY (invalid line …)". */
  skipped: string[];
}

/**
 * Parses ICS liberally: lines are normalised where the meaning is clear (spaces in RRULE lists), and when the
 * whole text does not parse, each top-level component is parsed on its own so one unreadable block costs only
 * itself. Throws ToolError only when nothing calendar-like is in the text.
 */
export function readCalendar(text: string): ReadCalendar {
  const lines = normalise(unfold(text));
  if (!lines.some((l) => /^BEGIN:VCALENDAR$/i.test(l))) throw new ToolError("not an ICS calendar (no BEGIN:VCALENDAR)");
  try {
    const parsed = ICAL.parse(`${lines.join("\r\n")}\r\n`);
    const list = (Array.isArray(parsed[0]) ? parsed : [parsed]) as unknown[];
    return { calendars: list.map((j) => new ICAL.Component(j as never)), skipped: [] };
  } catch {
    return readPiecewise(lines);
  }
}

function unfold(text: string): string[] {
  return text
    .replace(/^\uFEFF/, "")
    .replace(/\r\n?/g, "\n")
    .replace(/\n[ \t]/g, "")
    .split("\n")
    .filter((l) => l.trim() !== "");
}

/**
 * Dates and recurrence rules as clearly meant: Exchange writes "BYDAY=MO, TU, WE" (a rule has no spaces), and some
 * exports repeat the property name ("RRULE:RRULE:…") or leave a part without a value.
 */
function normalise(lines: string[]): string[] {
  return lines.map((l) => {
    // "DTSTART:20021028" is a date even without VALUE=DATE
    if (/^(DTSTART|DTEND|RECURRENCE-ID|EXDATE|RDATE)(;(?![^:]*VALUE=)[^:]*)?:\d{8}(,\d{8})*$/i.test(l))
      return l.replace(/:/, ";VALUE=DATE:");
    const m = l.match(/^((?:RRULE|EXRULE)(?:;[^:]*)?):(.*)$/i);
    if (!m) return l;
    const parts = (m[2] as string)
      .replace(/\s+/g, "")
      .replace(/^(?:RRULE:)+/i, "")
      .split(";");
    return `${m[1]}:${parts.filter((p) => /^[A-Z]+=./i.test(p)).join(";")}`;
  });
}

interface Block {
  name: string;
  lines: string[];
}

function readPiecewise(lines: string[]): ReadCalendar {
  const { zones, blocks, stray } = splitBlocks(lines);
  const skipped: string[] = [];
  if (stray > 0) skipped.push(`${stray} unreadable line${stray === 1 ? "" : "s"} outside any event`);
  const root = new ICAL.Component(["vcalendar", [], []]);
  for (const block of [...zones, ...blocks]) {
    try {
      for (const c of parseBlock(block.lines)) root.addSubcomponent(c);
    } catch (err) {
      const salvaged = block.name === "VEVENT" ? salvage(block.lines) : undefined;
      if (salvaged) for (const c of salvaged) root.addSubcomponent(c);
      else skipped.push(`${describeBlock(block)} (${(err as Error).message.slice(0, 120)})`);
    }
  }
  return { calendars: [root], skipped };
}

function parseBlock(lines: string[]): Component[] {
  const parsed = ICAL.parse(["BEGIN:VCALENDAR", ...lines, "END:VCALENDAR", ""].join("\r\n"));
  return new ICAL.Component(parsed as never).getAllSubcomponents();
}

/** What an event needs to be listed; a broken ATTENDEE, DTSTAMP or alarm line should not cost the event. */
const ESSENTIAL = /^(UID|SUMMARY|LOCATION|STATUS|DTSTART|DTEND|DURATION|RRULE|RDATE|EXDATE|RECURRENCE-ID)[;:]/i;

function salvage(lines: string[]): Component[] | undefined {
  const top: string[] = [];
  let depth = 0;
  for (const line of lines) {
    if (/^BEGIN:/i.test(line)) depth++;
    if (depth === 1 && (ESSENTIAL.test(line) || /^(BEGIN|END):VEVENT$/i.test(line))) top.push(line);
    if (/^END:/i.test(line)) depth--;
  }
  try {
    return parseBlock(top);
  } catch {
    return undefined;
  }
}

function splitBlocks(lines: string[]): { zones: Block[]; blocks: Block[]; stray: number } {
  const zones: Block[] = [];
  const blocks: Block[] = [];
  let stray = 0;
  let current: Block | undefined;
  let depth = 0;
  for (const line of lines) {
    const begin = line.match(/^BEGIN:(\S+)/i);
    const end = /^END:/i.test(line);
    if (/^(BEGIN|END):VCALENDAR$/i.test(line)) continue;
    if (!current) {
      if (begin) current = { name: (begin[1] as string).toUpperCase(), lines: [] };
      else if (!/^[\w-]+[;:]/.test(line)) stray++;
      if (!current) continue;
    }
    current.lines.push(line);
    if (begin) depth++;
    else if (end) depth--;
    if (depth === 0) {
      (current.name === "VTIMEZONE" ? zones : blocks).push(current);
      current = undefined;
    }
  }
  return { zones, blocks, stray };
}

function describeBlock(block: Block): string {
  const summary = block.lines.find((l) => /^SUMMARY[;:]/i.test(l))?.replace(/^[^:]*:/, "");
  const kind = block.name === "VEVENT" ? "an event" : `a ${block.name}`;
  return summary ? `${kind} "${summary}"` : kind;
}
