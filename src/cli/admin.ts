import type { DaemonStatus } from "../connector.js";
import { shownArgs, shownText } from "../gate/shown-args.js";
import type { AuditRow } from "../store/audit.js";
import { type Client, resultData } from "./client.js";
import { createStyle, plainLine } from "./render.js";
import { serverLine, tools } from "./tools.js";

type Values = { json?: boolean; session?: string; limit?: string };

/** `hermes status`, `hermes audit` and `hermes approvals`. */
export async function admin(client: Client, command: string, rest: string[], values: Values): Promise<number> {
  switch (command) {
    case "status":
      return status(client, values.json === true);
    case "audit":
      return audit(client, values);
    case "schedules":
      return schedules(client, rest, values.json === true);
    case "tools":
      return tools(client, values.json === true);
    default:
      return approvals(client, rest);
  }
}

async function status(client: Client, json: boolean): Promise<number> {
  const data = resultData(await client.call({ op: "status" })) as StatusData;
  if (json) return out(JSON.stringify(data, null, 2));
  const style = createStyle(process.stdout.isTTY === true);
  const ok = (b: boolean | null) => (b ? style.green("ok") : style.red("down"));
  const lines = [
    `hermes ${data.version} (pid ${data.pid}), up ${formatUptime(data.uptime_s)}`,
    `model      ${ok(data.model.reachable && !/not pulled|not offered/.test(data.model.detail))} ${data.model.provider} ${data.model.name} at ${data.model.base_url}: ${data.model.detail}`,
    ...data.connectors.map(
      (c) =>
        `${c.name.padEnd(10)} ${c.retrying ? "" : `${ok(c.ok)} `}${c.module ? `plugin ${c.module} ${c.version ?? "-"}: ` : ""}${c.detail}`,
    ),
    ...servingLines(data),
    ...(data.restart_needed_for?.length ? [`restart    needed for ${data.restart_needed_for.join(", ")}`] : []),
    `runs       ${data.runs.running} running, ${data.runs.queued} queued, ${data.runs.suspended} waiting for approval`,
    `approvals  ${data.pending_approvals} pending`,
    ...(data.speech ? [`speech     ${data.speech.ok === null ? "-" : ok(data.speech.ok)} ${data.speech.detail}`] : []),
    ...(data.vision ? [`vision     ${data.vision.ok ? style.green("ok") : "no"} ${data.vision.detail}`] : []),
    ...(data.mcp ?? []).map((s) => `mcp ${s.name.padEnd(6)} ${ok(s.connected)} ${serverLine(s)}`),
  ];
  return out(lines.join("\n"));
}

async function audit(client: Client, values: Values): Promise<number> {
  const limit = values.limit === undefined ? 50 : Number(values.limit); // checked by main.ts before connecting
  const rows = resultData(await client.call({ op: "audit", session: values.session, limit })) as AuditData[];
  // JSON lines: none for no rows (an empty line is no JSON, and a reader of the lines would stop at it).
  if (values.json) return rows.length === 0 ? 0 : out(rows.map((r) => JSON.stringify(r)).join("\n"));
  if (rows.length === 0) return out("no tool calls recorded");
  const lines = rows.reverse().map((r) => {
    const time = new Date(r.created_at).toISOString().replace("T", " ").slice(0, 19);
    const by = r.decided_by && ["approved", "denied", "expired"].includes(r.decision) ? ` by ${r.decided_by}` : "";
    const reason = r.reason ? ` (${plainLine(r.reason)})` : "";
    const duration = r.status === "ok" || r.status === "error" ? ` ${r.duration_ms} ms` : "";
    const tokens =
      r.step_prompt_tokens == null
        ? ""
        : `  [step ${r.step_prompt_tokens}+${r.step_output_tokens} tokens${r.step_tokens_estimated ? ", estimated" : ""}]`;
    return `${time}  ${r.session_key}  ${plainLine(r.tool)} ${plainLine(r.args)}  ${r.decision}${by}${reason}  ${r.status}${duration}  ${plainLine(r.summary ?? "")}${tokens}`;
  });
  return out(lines.join("\n"));
}

async function approvals(client: Client, rest: string[]): Promise<number> {
  const [action = "list", id] = rest;
  if (action === "list") {
    const rows = resultData(await client.call({ op: "approvals" })) as ApprovalData[];
    if (rows.length === 0) return out("no pending approvals");
    return out(
      rows
        .map(
          (a) =>
            `${a.id}  ${a.session_key}  ${a.tool} ${shownStored(a.args)}  expires ${new Date(a.expires_at).toISOString()}\n    ${a.reason}`,
        )
        .join("\n"),
    );
  }
  if ((action !== "approve" && action !== "deny") || !id) {
    process.stderr.write("usage: hermes approvals [list | approve ID | deny ID]\n");
    return 2;
  }
  const reply = await client.call({ op: "decide", approval_id: id, approve: action === "approve" });
  if (reply.type !== "result") throw new Error(reply.type === "error" ? reply.error.message : "unexpected reply");
  (reply.ok ? process.stdout : process.stderr).write(`${reply.message}\n`);
  return reply.ok ? 0 : 1;
}

async function schedules(client: Client, rest: string[], json: boolean): Promise<number> {
  const [action = "list", name] = rest;
  if (action === "run") {
    if (!name) {
      process.stderr.write("usage: hermes schedules run NAME\n");
      return 2;
    }
    const reply = await client.call({ op: "schedule_run", name });
    if (reply.type !== "result") throw new Error(reply.type === "error" ? reply.error.message : "unexpected reply");
    (reply.ok ? process.stdout : process.stderr).write(`${reply.message}\n`);
    return reply.ok ? 0 : 1;
  }
  if (action !== "list") {
    process.stderr.write("usage: hermes schedules [list | run NAME]\n");
    return 2;
  }
  const rows = resultData(await client.call({ op: "schedules" })) as ScheduleData[];
  if (json) return out(JSON.stringify(rows, null, 2));
  if (rows.length === 0) return out("no jobs or reminders");
  return out(
    rows
      .map(
        (r) =>
          `${r.name}  [${r.schedule}, ${r.timezone}] → ${r.deliver}\n    next: ${r.next_local}; last: ${r.last_status ?? "never ran"}${r.last_slot ? ` (${r.last_slot})` : ""}`,
      )
      .join("\n"),
  );
}

interface ScheduleData {
  name: string;
  schedule: string;
  timezone: string;
  deliver: string;
  next_local: string;
  last_status: string | null;
  last_slot: string | null;
}

function out(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}

function formatUptime(s: number): string {
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

function servingLines(data: StatusData): string[] {
  const lines: string[] = [];
  const s = data.serving;
  if (s && !s.primary) lines.push(`serving    ${s.model} at ${s.endpoint} (fallback: ${s.reason})`);
  const u = data.usage_today;
  if (u) {
    const est = u.estimated_calls ? ` (${u.estimated_calls} estimated)` : "";
    lines.push(`usage      today ${u.calls} model calls, ${u.prompt_tokens} prompt + ${u.output_tokens} output tokens${est}`);
    for (const l of u.daily_limits) lines.push(`           ${l.endpoint} ${l.model}: ${l.used} of ${l.daily_tokens} daily tokens`);
  }
  return lines;
}

/** What the daemon reports: the same shape connectors' /status and the HTTP connector show. */
type StatusData = DaemonStatus;

/** An audit listing's row as the daemon sends it (a listing always names the session). */
type AuditData = Pick<AuditRow, AuditColumn> & { session_key: string };
type AuditColumn =
  | "created_at"
  | "tool"
  | "args"
  | "decision"
  | "reason"
  | "decided_by"
  | "status"
  | "duration_ms"
  | "summary"
  | "step_prompt_tokens"
  | "step_output_tokens"
  | "step_tokens_estimated";

/** A call's stored arguments as an approval shows them (every value whole; invisible characters as code points). */
function shownStored(args: string): string {
  try {
    return shownArgs(JSON.parse(args), undefined, Number.POSITIVE_INFINITY);
  } catch {
    return shownText(args, Number.POSITIVE_INFINITY);
  }
}

interface ApprovalData {
  id: string;
  session_key: string;
  tool: string;
  args: string;
  reason: string;
  expires_at: number;
}
