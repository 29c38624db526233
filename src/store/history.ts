import type { ChatMessage, ToolCall } from "../model/types.js";
import type { Db } from "./db.js";
import { MessageCache } from "./message-cache.js";
import { recallWriter } from "./recall.js";
import { statements } from "./statements.js";

export interface SessionRow {
  id: number;
  key: string;
  created_at: number;
  closed_at: number | null;
}

export type RunStatus = "queued" | "running" | "suspended" | "done" | "error" | "aborted" | "interrupted";

export interface RunRow {
  id: string;
  session_id: number;
  source: string;
  status: RunStatus;
  steps: number;
  stop_reason: string | null;
  reply: string | null;
  started_at: number;
  ended_at: number | null;
  tools: string | null;
  /** The message that started the run, kept until the run starts (so a queued run survives a crash). */
  input: string | null;
  channel: string | null;
  attempts: number;
  /** When a chat connector sent the final reply; null while it is owed. */
  reply_sent_at: number | null;
  /** Who sent the message that started the run (`telegram:<id>`, `discord:<id>`, `cli`, `cron`, `hook`). */
  sender_id: string | null;
  sender_name: string | null;
  /** JSON list of image files (under the media folder) the run's message carries. */
  images: string | null;
  /** The id of the message the run answers, on its connector (a mail's): the reply threads under it. */
  reply_to: string | null;
}

/** A session as `hermes sessions` lists it. */
export interface SessionListRow extends SessionRow {
  messages: number;
  last_at: number | null;
}

/** A stored message with its row id and time, for showing and exporting. */
export interface StoredMessage {
  id: number;
  created_at: number;
  message: ChatMessage;
}

interface MessageRow {
  id: number;
  role: ChatMessage["role"];
  content: string;
  tool_calls: string | null;
  tool_call_id: string | null;
  tool_name: string | null;
  images: string | null;
}

/**
 * A session whose key is `<connector>:~<id>` is ephemeral: its messages (the context a client sent, the
 * run's own turns) live only in this process, never in the database; its rows keep only what the audit
 * needs (the session, the run without its input or reply). After a restart such a run cannot go on.
 */
export function isEphemeralKey(key: string): boolean {
  return key.includes(":~");
}

interface Ephemeral {
  messages: ChatMessage[];
  /** Where the run's own messages begin (after the context it was given). */
  runStart: number;
  runId?: string;
  input?: string;
}

/**
 * Sessions, runs and messages: the full conversation history, kept forever. The newest messages of
 * recently active sessions are also kept in memory, so a step does not re-read and re-parse history.
 */
export class HistoryStore {
  private readonly q;
  private readonly cache = new MessageCache(
    {
      newest: (sessionId, limit) => this.rows(this.q.recentMessages.all(sessionId, limit)),
      from: (sessionId, fromId) => this.rows(this.q.messagesFrom.all(sessionId, fromId)),
    },
    (m) => this.ids.get(m),
  );
  /** The row id of every message this store handed out or appended. */
  private readonly ids = new WeakMap<ChatMessage, number>();
  private readonly ephemeral = new Map<number, Ephemeral>();
  /** Stores a message and indexes it for recall in one transaction: the index never lags or leads. */
  private readonly insertMessage;

  constructor(private readonly db: Db) {
    this.q = statements(db, {
      activeSession: () => db.prepare("SELECT * FROM sessions WHERE key = ? AND closed_at IS NULL ORDER BY id DESC LIMIT 1"),
      sessionById: () => db.prepare("SELECT * FROM sessions WHERE id = ?"),
      insertSession: () => db.prepare("INSERT INTO sessions (key, created_at) VALUES (?, ?) RETURNING *"),
      insertClosedSession: () => db.prepare("INSERT INTO sessions (key, created_at, closed_at) VALUES (?, ?, ?) RETURNING *"),
      closeSessions: () => db.prepare("UPDATE sessions SET closed_at = ? WHERE key = ? AND closed_at IS NULL"),
      insertRun: () =>
        db.prepare(
          "INSERT INTO runs (id, session_id, source, status, started_at, tools, input, channel, sender_id, sender_name, images, reply_to) VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
        ),
      startRun: () => db.prepare("UPDATE runs SET status = 'running', attempts = attempts + 1 WHERE id = ?"),
      runsInOrder: () => db.prepare("SELECT * FROM runs WHERE status IN ('queued', 'running', 'suspended') ORDER BY started_at, rowid"),
      getRun: () => db.prepare("SELECT * FROM runs WHERE id = ?"),
      setRunSteps: () => db.prepare("UPDATE runs SET steps = ? WHERE id = ?"),
      setRunStatus: () => db.prepare("UPDATE runs SET status = ? WHERE id = ?"),
      markReplySent: () => db.prepare("UPDATE runs SET reply_sent_at = ? WHERE id = ? AND reply_sent_at IS NULL"),
      unsentReplies: () =>
        db.prepare(
          // Chat runs: each chat connector (Telegram, Discord, email, a plugin) marks the reply it sent.
          "SELECT * FROM runs WHERE reply_sent_at IS NULL AND ended_at IS NOT NULL AND source NOT IN ('cli', 'cron', 'hook', 'http', 'api') ORDER BY ended_at",
        ),
      endRun: () => db.prepare("UPDATE runs SET status = ?, stop_reason = ?, reply = ?, ended_at = ? WHERE id = ?"),
      insertMessage: () =>
        db.prepare(
          "INSERT INTO messages (session_id, run_id, role, content, tool_calls, tool_call_id, tool_name, created_at, images, delivered) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ),
      recentMessages: () =>
        db.prepare(
          "SELECT id, role, content, tool_calls, tool_call_id, tool_name, images FROM (SELECT * FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT ?) ORDER BY id",
        ),
      messagesFrom: () =>
        db.prepare(
          "SELECT id, role, content, tool_calls, tool_call_id, tool_name, images FROM messages WHERE session_id = ? AND id >= ? ORDER BY id",
        ),
      firstMessageOfRun: () => db.prepare("SELECT MIN(id) FROM messages WHERE run_id = ?").pluck(),
      runMessages: () =>
        db.prepare("SELECT id, role, content, tool_calls, tool_call_id, tool_name, images FROM messages WHERE run_id = ? ORDER BY id"),
      allMessages: () =>
        db.prepare(
          "SELECT id, role, content, tool_calls, tool_call_id, tool_name, images, created_at FROM messages WHERE session_id = ? ORDER BY id",
        ),
      latestSession: () => db.prepare("SELECT * FROM sessions WHERE key = ? ORDER BY closed_at IS NULL DESC, id DESC LIMIT 1"),
      toolNames: () => db.prepare("SELECT DISTINCT tool_name FROM messages WHERE session_id = ? AND role = 'tool'").pluck(),
      foreignText: () =>
        db
          .prepare(
            "SELECT 1 FROM messages m LEFT JOIN runs r ON r.id = m.run_id WHERE m.session_id = ? AND ((m.run_id IS NULL AND m.delivered IS NOT 'own') OR r.source = 'hook') LIMIT 1",
          )
          .pluck(),
      listSessions: () =>
        db.prepare(
          // Most recently used first; a closed session with no message (a stateless API request's) is not listed.
          "SELECT s.*, COUNT(m.id) AS messages, MAX(m.created_at) AS last_at FROM sessions s LEFT JOIN messages m ON m.session_id = s.id GROUP BY s.id HAVING COUNT(m.id) > 0 OR s.closed_at IS NULL ORDER BY COALESCE(MAX(m.created_at), s.created_at) DESC, MAX(m.id) DESC, s.id DESC LIMIT ?",
        ),
    });
    const index = recallWriter(db);
    this.insertMessage = db.transaction((args: [number, string | null, string, string, ...unknown[]], toolName: string | null): number => {
      const id = Number(this.q.insertMessage.run(...args).lastInsertRowid);
      index(id, args[2], args[3], toolName);
      return id;
    });
  }

  /** The open session for a key such as `cli:default`, created on first use. */
  activeSession(key: string): SessionRow {
    const found = this.q.activeSession.get(key) as SessionRow | undefined;
    return found ?? (this.q.insertSession.get(key, Date.now()) as SessionRow);
  }

  /**
   * A fresh ephemeral session (`key` as `isEphemeralKey` knows it) whose history starts as `context`: held
   * in memory until its run ends. Its row is closed from the start, so no later message lands in it.
   */
  ephemeralSession(key: string, context: ChatMessage[]): SessionRow {
    const now = Date.now();
    const row = this.q.insertClosedSession.get(key, now, now) as SessionRow;
    this.ephemeral.set(row.id, { messages: [...context], runStart: context.length });
    return row;
  }

  /** True for a session whose messages are held in memory only (see `ephemeralSession`). */
  isEphemeral(sessionId: number): boolean {
    return this.ephemeral.has(sessionId);
  }

  session(id: number): SessionRow | undefined {
    return this.q.sessionById.get(id) as SessionRow | undefined;
  }

  /** Closes the open session of `key` (it stays in the store) and opens a fresh one. */
  newSession(key: string): SessionRow {
    return this.db.transaction(() => {
      this.q.closeSessions.run(Date.now(), key);
      return this.q.insertSession.get(key, Date.now()) as SessionRow;
    })();
  }

  /**
   * Records a run as queued, with the message that starts it, before anything is acknowledged.
   * `tools`, when given, limits the run to those tools (a scheduled job's subset).
   */
  createRun(
    id: string,
    sessionId: number,
    source: string,
    o: { tools?: string[]; input: string; channel: string; sender?: { id: string; name: string }; images?: string[]; replyTo?: string },
  ): RunRow {
    const tools = o.tools ? JSON.stringify(o.tools) : null;
    const sender = [o.sender?.id ?? null, o.sender?.name ?? null];
    const images = o.images?.length ? JSON.stringify(o.images) : null;
    const held = this.ephemeral.get(sessionId);
    if (held) Object.assign(held, { runId: id, input: o.input });
    const input = held ? "" : o.input;
    return this.q.insertRun.get(id, sessionId, source, Date.now(), tools, input, o.channel, ...sender, images, o.replyTo ?? null) as RunRow;
  }

  /** Marks a run as running and counts the attempt (a run resumed after a crash is attempted again). */
  startRun(id: string): void {
    this.q.startRun.run(id);
  }

  /** Runs that have not ended, oldest first: what a restart must pick up. */
  unfinishedRuns(): RunRow[] {
    return this.q.runsInOrder.all() as RunRow[];
  }

  /** A chat connector delivered the run's final reply. */
  markReplySent(runId: string): void {
    this.q.markReplySent.run(Date.now(), runId);
  }

  /** Ended chat runs whose reply was never sent (the process died between the end and the send), oldest first. */
  unsentReplies(): RunRow[] {
    return this.q.unsentReplies.all() as RunRow[];
  }

  run(id: string): RunRow | undefined {
    const row = this.q.getRun.get(id) as RunRow | undefined;
    const held = row && this.ephemeral.get(row.session_id);
    return held?.input !== undefined ? { ...(row as RunRow), input: held.input } : row;
  }

  setRunSteps(id: string, steps: number): void {
    this.q.setRunSteps.run(steps, id);
  }

  setRunStatus(id: string, status: RunStatus): void {
    this.q.setRunStatus.run(status, id);
  }

  /** Records how a run ended; an ephemeral run's session is forgotten with it (and its reply not kept). */
  endRun(id: string, status: RunStatus, stopReason: string, reply: string): void {
    const sessionId = this.ephemeralOf(id);
    if (sessionId !== undefined) this.ephemeral.delete(sessionId);
    this.q.endRun.run(status, stopReason, sessionId === undefined ? reply : "", Date.now(), id);
  }

  /**
   * Appends a message; returns its row id. `delivered`: a message of no run delivered into the session, the
   * owner's own words (a reminder) or outside text (a job's or a hook's reply; see holdsForeignText).
   */
  appendMessage(sessionId: number, runId: string | null, message: ChatMessage, delivered?: "own" | "outside"): number {
    const held = this.ephemeral.get(sessionId);
    if (held) {
      held.messages.push(message);
      return 0;
    }
    const toolCalls = message.role === "assistant" && message.toolCalls?.length ? JSON.stringify(message.toolCalls) : null;
    const callId = message.role === "tool" ? message.toolCallId : null;
    const toolName = message.role === "tool" ? message.toolName : null;
    const images = message.role === "user" && message.imageFiles?.length ? JSON.stringify(message.imageFiles) : null;
    const id = this.insertMessage(
      [sessionId, runId, message.role, message.content, toolCalls, callId, toolName, Date.now(), images, delivered ?? null],
      toolName,
    );
    this.ids.set(message, id);
    this.cache.appended(sessionId, message);
    return id;
  }

  /** The newest `limit` messages of a session, oldest first. */
  recentMessages(sessionId: number, limit: number): ChatMessage[] {
    const held = this.ephemeral.get(sessionId);
    return held ? held.messages.slice(-limit) : this.cache.newest(sessionId, limit);
  }

  /**
   * The messages a prompt is built from, oldest first: the newest 400, and every one from `fromId` on when
   * that reaches further back (the start of a window of many short messages, or of a long run).
   */
  windowMessages(sessionId: number, fromId?: number): ChatMessage[] {
    const held = this.ephemeral.get(sessionId);
    return held ? held.messages.slice() : this.cache.window(sessionId, fromId);
  }

  /** The id of a run's first message (its user message), when it has one stored. */
  firstMessageOf(runId: string): number | undefined {
    return (this.q.firstMessageOfRun.get(runId) as number | null | undefined) ?? undefined;
  }

  private rows(rows: unknown[]): ChatMessage[] {
    return (rows as MessageRow[]).map((r) => this.toMessage(r));
  }

  /** Every message a run added, in order (its user message, assistant turns and tool results). */
  runMessages(runId: string): ChatMessage[] {
    const sessionId = this.ephemeralOf(runId);
    const held = sessionId === undefined ? undefined : this.ephemeral.get(sessionId);
    if (held) return held.messages.slice(held.runStart);
    return (this.q.runMessages.all(runId) as MessageRow[]).map((r) => this.toMessage(r));
  }

  /** The row id of a message this store returned or appended (undefined for one it never saw). */
  messageId(message: ChatMessage): number | undefined {
    return this.ids.get(message);
  }

  /** Every message of a session, oldest first, with ids and times. */
  allMessages(sessionId: number): StoredMessage[] {
    return (this.q.allMessages.all(sessionId) as (MessageRow & { created_at: number })[]).map((r) => ({
      id: r.id,
      created_at: r.created_at,
      message: this.toMessage(r),
    }));
  }

  /**
   * The tools whose results a session holds, wherever it lives: an ephemeral session's messages are held
   * here (the context its client sent, then its run's), any other's are stored (read without its messages).
   */
  toolResultNames(sessionId: number): string[] {
    const held = this.ephemeral.get(sessionId);
    if (held) return [...new Set(held.messages.flatMap((m) => (m.role === "tool" ? [m.toolName] : [])))];
    return this.q.toolNames.all(sessionId) as string[];
  }

  /**
   * Whether a stored session holds text that came from no conversation of its own: a webhook's run (a hook
   * may name any session as its own, its payload is anyone's) or a message of no run, delivered into it
   * (the CLI keeps a job's or a hook's reply in the session it is delivered to), but for the owner's own
   * reminders.
   */
  holdsForeignText(sessionId: number): boolean {
    return !this.ephemeral.has(sessionId) && this.q.foreignText.get(sessionId) !== undefined;
  }

  /** The open session of `key`, else its newest closed one. */
  latestSession(key: string): SessionRow | undefined {
    return this.q.latestSession.get(key) as SessionRow | undefined;
  }

  /** The newest sessions with their message counts, newest first. */
  listSessions(limit: number): SessionListRow[] {
    return this.q.listSessions.all(limit) as SessionListRow[];
  }

  /** The ephemeral session a run is held in, if it is. */
  private ephemeralOf(runId: string): number | undefined {
    if (this.ephemeral.size === 0) return undefined;
    for (const [sessionId, held] of this.ephemeral) if (held.runId === runId) return sessionId;
    return undefined;
  }

  private toMessage(row: MessageRow): ChatMessage {
    const message = toMessage(row);
    this.ids.set(message, row.id);
    return message;
  }
}

function toMessage(row: MessageRow): ChatMessage {
  switch (row.role) {
    case "assistant": {
      const toolCalls = row.tool_calls ? (JSON.parse(row.tool_calls) as ToolCall[]) : undefined;
      return toolCalls ? { role: "assistant", content: row.content, toolCalls } : { role: "assistant", content: row.content };
    }
    case "tool":
      return { role: "tool", content: row.content, toolCallId: row.tool_call_id ?? "", toolName: row.tool_name ?? "" };
    case "user":
      return row.images
        ? { role: "user", content: row.content, imageFiles: JSON.parse(row.images) as string[] }
        : { role: "user", content: row.content };
    default:
      return { role: row.role, content: row.content } as ChatMessage;
  }
}
