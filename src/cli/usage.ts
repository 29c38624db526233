import type { UsageTotals } from "../store/usage.js";
import type { Client } from "./client.js";

type Values = { json?: boolean; since?: string; by?: string };

const BY = ["day", "session", "model", "endpoint"] as const;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

type Totals = UsageTotals;

export class UsageArgError extends Error {}

/** `--since 7d` (m, h, d, w) or a date (2026-11-01) into ms since the epoch. */
function parseSince(value: string | undefined, now = Date.now()): number {
  if (value === undefined) return now - 7 * UNIT_MS.d;
  const span = /^(\d+)([mhdw])$/.exec(value);
  if (span) return now - Number(span[1]) * UNIT_MS[span[2] as keyof typeof UNIT_MS];
  const date = Date.parse(value.length === 10 ? `${value}T00:00:00` : value);
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
  const data = reply.data as { total: Totals; groups: Totals[] };
  if (values.json) return write(JSON.stringify({ since: new Date(since).toISOString(), by: values.by ?? null, ...data }, null, 2));
  if (data.total.calls === 0) return write(`no model calls since ${new Date(since).toISOString().slice(0, 16).replace("T", " ")}`);
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
