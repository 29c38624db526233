import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { loadConfig } from "../config/load.js";
import { withoutTimeNote } from "../time-note.js";

interface SessionRow {
  id: number;
  key: string;
  created_at: number;
  closed_at: number | null;
}

interface MessageRow {
  id: number;
  role: string;
  content: string;
  tool_calls: string | null;
  tool_name: string | null;
  created_at: number;
}

interface ExportedSession extends SessionRow {
  summary: string | null;
  messages: ExportedMessage[];
}

/** A message as exported: its tool calls as JSON itself, not a string of JSON inside the JSON. */
interface ExportedMessage extends Omit<MessageRow, "tool_calls"> {
  tool_calls: { name: string; args: unknown }[] | null;
}

/**
 * `hermes export [--session KEY] [--format md|json]`: conversations on stdout, read from the database
 * directly (read-only), so it works whether or not the daemon runs.
 */
export function exportCommand(configPath: string, values: { session?: string; format?: string }): number {
  const format = values.format ?? "md";
  if (format !== "md" && format !== "json") {
    process.stderr.write("usage: hermes export [--session KEY] [--format md|json]\n");
    return 2;
  }
  const path = loadConfig(configPath).config.storage.path;
  const db = existsSync(path) ? new Database(path, { readonly: true, fileMustExist: true }) : undefined;
  try {
    if (!db?.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sessions'").get()) {
      process.stderr.write(`hermes: ${path} holds no conversations yet; it is set up when hermes first starts\n`);
      return 1;
    }
    const sessions = readSessions(db, values.session);
    if (values.session && sessions.length === 0) {
      process.stderr.write(`there is no session ${values.session}\n`);
      return 1;
    }
    const text = format === "json" ? JSON.stringify({ exported_at: new Date().toISOString(), sessions }, null, 2) : toMarkdown(sessions);
    process.stdout.write(`${text}\n`);
    return 0;
  } finally {
    db?.close();
  }
}

function readSessions(db: Database.Database, key: string | undefined): ExportedSession[] {
  const sessions = (
    key
      ? db.prepare("SELECT id, key, created_at, closed_at FROM sessions WHERE key = ? ORDER BY id").all(key)
      : db.prepare("SELECT id, key, created_at, closed_at FROM sessions ORDER BY id").all()
  ) as SessionRow[];
  const messages = db.prepare("SELECT id, role, content, tool_calls, tool_name, created_at FROM messages WHERE session_id = ? ORDER BY id");
  const summary = db.prepare("SELECT summary FROM summaries WHERE session_id = ? ORDER BY id DESC LIMIT 1").pluck();
  return sessions.map((s) => ({
    ...s,
    summary: (summary.get(s.id) as string | undefined) ?? null,
    messages: (messages.all(s.id) as MessageRow[]).map((m) => ({ ...m, tool_calls: m.tool_calls ? JSON.parse(m.tool_calls) : null })),
  }));
}

function toMarkdown(sessions: ExportedSession[]): string {
  return sessions
    .map((s) => {
      const head = `# ${s.key} (session ${s.id})\n\nStarted ${iso(s.created_at)}${s.closed_at ? `, closed ${iso(s.closed_at)}` : ""}.`;
      const summary = s.summary ? `\n\n> **Summary of the earlier conversation:** ${s.summary.replace(/\n/g, "\n> ")}` : "";
      return `${head}${summary}\n\n${s.messages.map(messageMarkdown).join("\n\n")}`;
    })
    .join("\n\n---\n\n");
}

function messageMarkdown(m: ExportedMessage): string {
  const at = iso(m.created_at);
  switch (m.role) {
    case "user":
      return `**You** (${at}):\n\n${withoutTimeNote(m.content)}`;
    case "tool":
      return `*Result of ${m.tool_name ?? "a tool"}:*\n\n${codeBlock(m.content)}`;
    default: {
      const called = (m.tool_calls ?? []).map((c) => `*Called ${c.name}* ${inlineCode(JSON.stringify(c.args ?? {}))}`).join("\n");
      return `**hermes** (${at}):\n\n${[m.content, called].filter(Boolean).join("\n\n")}`;
    }
  }
}

/** The longest run of backticks in `text`: a code span or fence must be longer to hold it (CommonMark). */
function longestBackticks(text: string): number {
  return Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
}

function inlineCode(text: string): string {
  const fence = "`".repeat(longestBackticks(text) + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

function codeBlock(text: string): string {
  const fence = "`".repeat(Math.max(3, longestBackticks(text) + 1));
  return `${fence}\n${text}\n${fence}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").slice(0, 16);
}
