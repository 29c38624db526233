import { namesRealTime } from "../real-time.js";
import type { UsageTotals } from "../store/usage.js";
import type { Client } from "./client.js";

type Values = { json?: boolean; since?: string; by?: string };

const BY = ["day", "session", "model", "endpoint"] as const;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

type Totals = UsageTotals;

export class UsageArgError extends Error {}

/** A date, or a date and time, without a zone: the daemon reads it in the configured `timezone`. */
const LOCAL_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?$/;

/**
 * `--since 7d` (m, h, d, w) into ms since the epoch; a date (2026-11-01, 2026-11-01 08:00) as it is, for the
 * daemon to read in the configured timezone (not the shell's: an SSH session in UTC would be hours off);
 * an ISO time with its own offset into ms.
 */
function parseSince(value: string | undefined, now = Date.now()): number | string {
  if (value === undefined) return now - 7 * UNIT_MS.d;
  const span = /^(\d+)([mhdw])$/.exec(value);
  if (span) return now - Number(span[1]) * UNIT_MS[span[2] as keyof typeof UNIT_MS];
  if (LOCAL_DATE.test(value) && namesRealTime(...(value.split(/[-T :]/).map(Number) as [number, number, number, ...number[]])))
    return value;
  const date = /(?:Z|[+-]\d{2}:?\d{2})$/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(date))
    throw new UsageArgError(`--since expects a span such as 7d, 24h, 30m, 2w or a date such as 2026-11-01, not '${value}'`);
  return date;
}

/** `hermes usage [--since 7d] [--by day|session|model|endpoint] [--json]`: the ledger's totals. */
export async function usage(client: Client, values: Values): Promise<number> {
  const since = parseSince(values.since);
  if (values.by !== undefined && !(BY as readonly string[]).includes(values.by))
    throw new UsageArgError(`--by expects one of ${BY.join(", ")}, not '${values.by}'`);
  const reply = await client.call({ op: "usage", since, by: values.by });
  if (reply.type !== "result" || !reply.ok) throw new Error(reply.type === "error" ? reply.error.message : "unexpected reply");
  const { since: from, ...data } = reply.data as { total: Totals; groups: Totals[]; since?: number };
  const at = from ?? (typeof since === "number" ? since : Date.now());
  if (values.json) return write(JSON.stringify({ since: new Date(at).toISOString(), by: values.by ?? null, ...data }, null, 2));
  if (data.total.calls === 0)
    return write(`no model calls since ${typeof since === "string" ? since : new Date(at).toISOString().slice(0, 16).replace("T", " ")}`);
  const rows = [...data.groups.map((g) => line(g.key, g)), line("total", data.total)];
  const header = line(values.by ?? "", undefined);
  return write([header, ...rows].join("\n"));
}

function line(key: string, t: Totals | undefined): string {
  const cells = t
    ? [
        String(t.calls),
        String(t.failed),
        String(t.prompt_tokens),
        String(t.output_tokens),
        String(t.cached_tokens),
        t.tokens_per_s === null ? "-" : t.tokens_per_s.toFixed(1),
        t.estimated ? `${t.estimated} estimated` : "",
      ]
    : ["calls", "failed", "prompt", "output", "cached", "tok/s", ""];
  const widths = [7, 7, 10, 10, 9, 8];
  return [key.padEnd(24), ...cells.map((c, i) => (i < widths.length ? c.padStart(widths[i] as number) : `  ${c}`))].join("").trimEnd();
}

function write(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}
