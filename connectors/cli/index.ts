import { chmodSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { dirname } from "node:path";
import type { AgentEvent } from "../../src/agent/types.js";
import type { Connector, ConnectorHealth, Core } from "../../src/connector.js";
import { errorMessage } from "../../src/errors.js";
import type { UsageGrouping, UsageTotals } from "../../src/store/usage.js";
import { parseLocalDateTime } from "../../src/time.js";
import { VERSION } from "../../src/version.js";
import { createUploads, isAskFile, takeFile } from "./files.js";
import { dispatchPairing } from "./pair.js";
import { type ErrorCode, limitOf, MAX_LINE_BYTES, PROTOCOL_VERSION, type Reply } from "./protocol.js";
import { dispatchStorage } from "./storage.js";

/** How long a stop waits for clients to close their side of the socket before it cuts them. */
const CLIENT_END_GRACE_MS = 500;

type Json = Record<string, unknown>;

/** How much a CLI client may leave unread before it is cut off (a long answer streamed token by token fits). */
export const MAX_UNREAD_BYTES = 8 * 1024 * 1024;

/** The local CLI: a Unix socket speaking NDJSON (see protocol.ts and the README). */
export function createCliConnector(core: Core, socketPath: string): Connector {
  let server: Server | undefined;
  const sockets = new Set<Socket>();

  function serve(socket: Socket): void {
    sockets.add(socket);
    const closed = new AbortController();
    socket.on("close", () => {
      sockets.delete(socket);
      closed.abort();
    });
    socket.on("error", (err) => core.log.debug({ err }, "cli client socket error"));
    const send = (reply: Reply) => {
      if (socket.destroyed || !socket.writable) return;
      socket.write(`${JSON.stringify(reply)}\n`);
      // A client that never reads would make every reply and streamed token pile up in this process.
      if (socket.writableLength > MAX_UNREAD_BYTES) {
        core.log.warn({ unread: socket.writableLength }, "cli client does not read its replies; disconnected");
        socket.destroy();
      }
    };
    const uploads = createUploads();
    readLines(
      socket,
      (line) => handleLine(core, line, send, uploads, closed.signal),
      (code, message) => send(errorReply(null, code, message)),
    );
  }

  return {
    name: "cli",
    async start() {
      mkdirSync(dirname(socketPath), { recursive: true });
      rmSync(socketPath, { force: true });
      server = createServer(serve);
      const previous = process.umask(0o177);
      try {
        await new Promise<void>((resolve, reject) => {
          server?.once("error", reject);
          server?.listen(socketPath, () => resolve());
        });
      } finally {
        process.umask(previous);
      }
      chmodSync(socketPath, 0o600);
      server.on("error", (err) => core.log.error({ err }, "cli socket error"));
    },
    async stop() {
      for (const s of sockets) s.end();
      const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      // The server closes once every client has closed its side too: one that does not (a `hermes chat`
      // suspended with Ctrl-Z, a script holding its connection) is cut after a moment, or the stop would wait
      // for it until systemd's TimeoutStopSec killed the daemon.
      const cut = setTimeout(() => {
        for (const s of sockets) s.destroy();
      }, CLIENT_END_GRACE_MS);
      await closed;
      clearTimeout(cut);
      rmSync(socketPath, { force: true });
    },
    /** `cli:<name>`: the text is added to that session's history (there is no screen to push to). */
    async deliver(target, text, options) {
      const session = core.store.history.activeSession(target);
      const id = core.store.history.appendMessage(session.id, null, { role: "assistant", content: text }, options?.own ? "own" : "outside");
      return { messageId: String(id) };
    },
    health(): ConnectorHealth {
      if (!server?.listening) return { ok: false, detail: "not listening" };
      // A socket file removed from under us (say, a cleaned /run) leaves the daemon unreachable.
      if (!existsSync(socketPath)) return { ok: false, detail: `socket ${socketPath} was removed` };
      return { ok: true, detail: `listening on ${socketPath}` };
    },
  };
}

/** Splits a socket's input into lines, enforcing the 1 MiB limit without buffering more than that. */
function readLines(socket: Socket, onLine: (line: string) => void, onError: (code: ErrorCode, message: string) => void): void {
  let buffer = "";
  let discarding = false;
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    let start = 0;
    for (let nl = chunk.indexOf("\n"); nl >= 0; nl = chunk.indexOf("\n", start)) {
      const piece = chunk.slice(start, nl);
      start = nl + 1;
      if (discarding) {
        discarding = false;
        buffer = "";
        continue;
      }
      const line = buffer + piece;
      buffer = "";
      if (Buffer.byteLength(line) > MAX_LINE_BYTES) onError("too_long", `a line may be at most ${MAX_LINE_BYTES} bytes`);
      else if (line.trim()) onLine(line);
    }
    if (discarding) return;
    buffer += chunk.slice(start);
    if (buffer.length > MAX_LINE_BYTES) {
      onError("too_long", `a line may be at most ${MAX_LINE_BYTES} bytes; the rest of this line is ignored`);
      buffer = "";
      discarding = true;
    }
  });
}

type Uploads = ReturnType<typeof createUploads>;

function handleLine(core: Core, line: string, send: (reply: Reply) => void, uploads: Uploads, closed: AbortSignal): void {
  let request: Json;
  try {
    const parsed: unknown = JSON.parse(line);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    request = parsed as Json;
  } catch {
    send(errorReply(null, "bad_json", "each line must be one JSON object"));
    return;
  }
  const id = typeof request.id === "string" || typeof request.id === "number" ? String(request.id) : null;
  if (request.v !== PROTOCOL_VERSION) {
    send(errorReply(id, "unsupported_version", `this daemon speaks protocol version ${PROTOCOL_VERSION}; send "v": ${PROTOCOL_VERSION}`));
    return;
  }
  if (id === null) {
    send(errorReply(null, "bad_request", 'every request needs an "id"'));
    return;
  }
  dispatch(core, id, request, send, uploads, closed).catch((err: unknown) => {
    core.log.error({ err, op: request.op }, "cli request failed");
    send(errorReply(id, "internal", errorMessage(err)));
  });
}

async function dispatch(
  core: Core,
  id: string,
  req: Json,
  send: (reply: Reply) => void,
  uploads: Uploads,
  closed: AbortSignal,
): Promise<void> {
  const result = (ok: boolean, message?: string, data?: unknown) => send({ v: 1, id, type: "result", ok, message, data });
  const bad = (message: string) => send(errorReply(id, "bad_request", message));
  const session = typeof req.session === "string" && /^[\w.:-]{1,64}$/.test(req.session) ? `cli:${req.session}` : undefined;
  switch (req.op) {
    case "hello":
      return send({ v: 1, id, type: "hello", version: VERSION, protocol: PROTOCOL_VERSION, pid: process.pid });
    case "ask": {
      if (!session) return bad('"session" must be a name of letters, digits, ".", "_", ":" or "-"');
      if (req.file !== undefined) return askWithFile(core, id, session, req, send, uploads);
      if (typeof req.text !== "string" || !req.text.trim()) return bad('"text" must be a non-empty string');
      const listener = (event: AgentEvent) => send({ v: 1, id, type: "event", event });
      const { done } = core.submit({ sessionKey: session, text: req.text, source: "cli", listener });
      const outcome = await done;
      return send({ v: 1, id, type: "done", run_id: outcome.runId, reply: outcome.reply, stop_reason: outcome.stopReason });
    }
    case "upload": {
      if (typeof req.data !== "string" || (req.upload !== undefined && typeof req.upload !== "string"))
        return bad('"data" (base64) is required; "upload" continues an earlier upload');
      const added = uploads.add(req.data, req.upload as string | undefined);
      return added.ok ? result(true, undefined, { upload: added.upload, bytes: added.bytes }) : result(false, added.message);
    }
    case "decide": {
      if (typeof req.approval_id !== "string" || typeof req.approve !== "boolean")
        return bad('"approval_id" (string) and "approve" (boolean) are required');
      const decision = core.decide(req.approval_id, req.approve, "cli");
      return result(decision.ok, decision.message);
    }
    case "stop":
      if (!session) return bad('"session" is required');
      return result(true, core.stop(session) ? "stopped the current run" : "nothing was running");
    case "new":
      if (!session) return bad('"session" is required');
      core.newSession(session);
      return result(true, "started a new session");
    case "compact": {
      if (!session) return bad('"session" is required');
      const compacted = await core.compact(session);
      return result(compacted.ok, compacted.message);
    }
    case "status":
      await core.toolsKnown(); // so that right after a start it reports the MCP servers' first attempt
      return result(true, undefined, await core.status());
    case "sessions":
    case "session_show":
    case "memories":
    case "forget":
    case "backup":
      return dispatchStorage(core, req, result, bad);
    case "approvals":
      return result(true, undefined, core.store.approvals.pending());
    case "audit": {
      const limit = limitOf(req.limit, 10_000);
      const key = typeof req.session === "string" ? req.session : undefined;
      return result(true, undefined, core.store.audit.list(key, limit));
    }
    case "usage": {
      const since = usageSince(req.since, core.config().timezone);
      if (since === undefined)
        return bad('"since" (ms since the epoch, or a date such as 2026-11-01 in the configured timezone) is required');
      const by = typeof req.by === "string" && USAGE_GROUPS.includes(req.by) ? (req.by as UsageGrouping) : undefined;
      if (req.by !== undefined && !by) return bad(`"by" must be one of ${USAGE_GROUPS.join(", ")}`);
      const [total] = core.store.usage.totals(since);
      return result(true, undefined, { since, total: total ?? emptyTotals(), groups: by ? core.store.usage.totals(since, by) : [] });
    }
    case "schedules":
      return result(true, undefined, core.scheduler()?.list() ?? []);
    case "tools": {
      await core.toolsKnown();
      const servers = (await core.status()).mcp ?? [];
      return result(true, undefined, { tools: core.tools(), servers });
    }
    case "pair":
    case "pair_confirm":
    case "reload":
      return dispatchPairing(core, id, req, send, closed);
    case "schedule_run": {
      const scheduler = core.scheduler();
      if (!scheduler) return result(false, "the cron connector is off (connectors.cron.enabled)");
      if (typeof req.name !== "string") return bad('"name" is required');
      const fired = await scheduler.runNow(req.name);
      return result(fired.status === "ok", `${req.name}: ${fired.status}${fired.error ? ` (${fired.error})` : ""}`, fired);
    }
    default:
      return bad(
        `unknown op ${JSON.stringify(req.op)}; ops: hello, ask, upload, decide, stop, new, compact, status, approvals, audit, schedules, schedule_run, usage, sessions, session_show, memories, forget, backup, tools, pair, pair_confirm, reload`,
      );
  }
}

/** `ask` with an uploaded file: transcribed or seen like one from the phone; a refusal ends it with stop_reason `refused`. */
async function askWithFile(
  core: Core,
  id: string,
  session: string,
  req: Json,
  send: (reply: Reply) => void,
  uploads: Uploads,
): Promise<void> {
  const file = req.file;
  const caption = typeof req.text === "string" ? req.text.trim() : "";
  if (!isAskFile(file)) return send(errorReply(id, "bad_request", '"file" must be {"upload", "kind": "audio"|"image", "name"}'));
  const bytes = uploads.take(file.upload);
  if (!bytes) return send(errorReply(id, "bad_request", `there is no upload ${file.upload} on this connection`));
  const outcome = await takeFile(core.config(), file, bytes, caption);
  if (outcome.type === "reply") return send({ v: 1, id, type: "done", run_id: "", reply: outcome.text, stop_reason: "refused" });
  if (outcome.echo) send({ v: 1, id, type: "event", event: { type: "transcript", text: outcome.echo } });
  const listener = (event: AgentEvent) => send({ v: 1, id, type: "event", event });
  const { done } = core.submit({ sessionKey: session, text: outcome.text, source: "cli", listener, images: outcome.images });
  const end = await done;
  send({ v: 1, id, type: "done", run_id: end.runId, reply: end.reply, stop_reason: end.stopReason });
}

const USAGE_GROUPS: string[] = ["day", "session", "model", "endpoint"];

/** `since` as ms since the epoch, or a date (and time) without a zone, read in `zone`; undefined when neither. */
function usageSince(since: unknown, zone: string): number | undefined {
  if (typeof since === "number") return since;
  if (typeof since !== "string") return undefined;
  const at = parseLocalDateTime(/^\d{4}-\d{2}-\d{2}$/.test(since) ? `${since} 00:00` : since, zone, new Date());
  return at && /^\d{4}-/.test(since) ? at.getTime() : undefined;
}

function emptyTotals(): UsageTotals {
  return { key: "all", calls: 0, failed: 0, prompt_tokens: 0, output_tokens: 0, cached_tokens: 0, estimated: 0, tokens_per_s: null };
}

function errorReply(id: string | null, code: ErrorCode, message: string): Reply {
  return { v: 1, id, type: "error", error: { code, message } };
}
