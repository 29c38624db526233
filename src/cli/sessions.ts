import { withoutTimeNote } from "../time-note.js";
import { type Client, resultData } from "./client.js";
import { plainLine } from "./render.js";

type Values = { json?: boolean; limit?: string };

/** Sessions listed when --limit does not say. */
const LIST_LIMIT = 50;

/** `hermes sessions [list | show KEY]` and `hermes memory [list | forget ID]`, over the socket. */
export async function sessionsCommand(client: Client, rest: string[], values: Values): Promise<number> {
  const [action = "list", key] = rest;
  if (action === "list") {
    const limit = values.limit === undefined ? LIST_LIMIT : Number(values.limit);
    // One more than shown, to know whether there are more.
    const all = resultData(await client.call({ op: "sessions", limit: limit + 1 })) as SessionData[];
    const rows = all.slice(0, limit);
    if (values.json) return out(JSON.stringify(rows, null, 2));
    if (rows.length === 0) return out("no sessions yet");
    const lines = rows.map((s) => {
      const state = s.closed_at ? `closed ${time(s.closed_at)}` : "open";
      const summary = s.summary_turns ? `, ${s.summary_turns} turn(s) summarised` : "";
      return `${s.key.padEnd(24)} #${s.id}  ${state}, ${s.messages} message(s)${summary}, last ${s.last_at ? time(s.last_at) : "never"}`;
    });
    if (all.length > limit) lines.push(`(the ${limit} sessions used most recently; --limit N lists more)`);
    return out(lines.join("\n"));
  }
  if (action !== "show" || !key) return usage("usage: hermes sessions [list | show KEY]");
  const reply = await client.call({ op: "session_show", key });
  if (reply.type === "result" && !reply.ok) return fail(reply.message ?? "failed");
  const data = resultData(reply) as ShowData;
  if (values.json) return out(JSON.stringify(data, null, 2));
  const latest = data.summaries.at(-1);
  const lines = [
    `${data.session.key} #${data.session.id}, started ${time(data.session.created_at)}${data.session.closed_at ? `, closed ${time(data.session.closed_at)}` : ""}, ${data.messages} message(s)`,
    latest
      ? `summary (compaction ${data.summaries.length}, ${latest.turns} turn(s), messages #${latest.from_message_id}–#${latest.to_message_id}, made ${time(latest.created_at)}):\n${indent(latest.summary)}`
      : "no summary yet (nothing had to be left out of a prompt)",
    "recent messages:",
    ...data.recent.map((m) => {
      const words = m.role === "user" ? withoutTimeNote(m.content) : m.content;
      return `  #${m.id} ${m.role}: ${plainLine(words).slice(0, 160)}`;
    }),
  ];
  return out(lines.join("\n"));
}

export async function memoryCommand(client: Client, rest: string[], values: Values): Promise<number> {
  const [action = "list", id] = rest;
  if (action === "list") {
    const rows = resultData(await client.call({ op: "memories" })) as MemoryData[];
    if (values.json) return out(JSON.stringify(rows, null, 2));
    if (rows.length === 0) return out("nothing remembered yet");
    return out(rows.map((m) => `#${m.id}  ${m.owner ? `${m.owner_name ?? m.owner} (${m.owner})` : "everyone"}: ${m.fact}`).join("\n"));
  }
  const memoryId = Number(id);
  if (action !== "forget" || !Number.isInteger(memoryId) || memoryId <= 0) return usage("usage: hermes memory [list | forget ID]");
  const reply = await client.call({ op: "forget", memory_id: memoryId });
  if (reply.type !== "result") throw new Error(reply.type === "error" ? reply.error.message : "unexpected reply");
  return reply.ok ? out(reply.message ?? "") : fail(reply.message ?? "failed");
}

function time(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").slice(0, 16);
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
}

function out(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}

function fail(text: string): number {
  process.stderr.write(`${text}\n`);
  return 1;
}

function usage(text: string): number {
  process.stderr.write(`${text}\n`);
  return 2;
}

interface SessionData {
  id: number;
  key: string;
  created_at: number;
  closed_at: number | null;
  messages: number;
  last_at: number | null;
  summary_turns: number;
}

interface ShowData {
  session: { id: number; key: string; created_at: number; closed_at: number | null };
  messages: number;
  summaries: { summary: string; from_message_id: number; to_message_id: number; turns: number; created_at: number }[];
  recent: { id: number; role: string; content: string }[];
}

interface MemoryData {
  id: number;
  fact: string;
  owner: string | null;
  owner_name: string | null;
}
