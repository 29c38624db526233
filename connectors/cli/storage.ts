/** The CLI socket's ops on what hermes keeps: sessions and their summaries, memory facts, backups. */
import { isAbsolute } from "node:path";
import type { Core } from "../../src/connector.js";
import { backupDatabase, backupInto, backupSettings, describeBackup } from "../../src/store/backup.js";
import { limitOf } from "./protocol.js";

type Json = Record<string, unknown>;
type Result = (ok: boolean, message?: string, data?: unknown) => void;

export async function dispatchStorage(core: Core, req: Json, result: Result, bad: (message: string) => void): Promise<void> {
  const { history, summaries, memory } = core.store;
  switch (req.op) {
    case "sessions": {
      const limit = limitOf(req.limit, 1000);
      const rows = history.listSessions(limit).map((s) => ({ ...s, summary_turns: summaries.latest(s.id)?.turns ?? 0 }));
      return result(true, undefined, rows);
    }
    case "session_show": {
      if (typeof req.key !== "string") return bad('"key" is required, e.g. "cli:default" or "telegram:123"');
      const session = history.latestSession(req.key);
      if (!session) return result(false, `there is no session ${req.key}`);
      const messages = history.allMessages(session.id);
      const recent = messages
        .slice(-10)
        .map((m) => ({ id: m.id, created_at: m.created_at, role: m.message.role, content: m.message.content }));
      return result(true, undefined, { session, messages: messages.length, summaries: summaries.of(session.id), recent });
    }
    case "memories":
      return result(true, undefined, memory.list());
    case "forget": {
      if (typeof req.memory_id !== "number") return bad('"memory_id" (number) is required');
      const forgotten = memory.forget(req.memory_id);
      return result(forgotten, forgotten ? `forgot #${req.memory_id}` : `there is no fact #${req.memory_id}`);
    }
    case "backup":
      return backup(core, req, result, bad);
  }
}

async function backup(core: Core, req: Json, result: Result, bad: (message: string) => void): Promise<void> {
  if (req.path !== undefined && (typeof req.path !== "string" || !isAbsolute(req.path))) return bad('"path" must be an absolute path');
  try {
    const settings = backupSettings(core.config().storage);
    const done = typeof req.path === "string" ? await backupDatabase(core.store.db, req.path) : await backupInto(core.store.db, settings);
    core.log.info({ path: done.path, bytes: done.bytes, ms: done.ms }, "backup made");
    return result(true, describeBackup(done), done);
  } catch (err) {
    core.log.error({ err }, "backup failed");
    return result(false, `backup failed: ${(err as Error).message}`);
  }
}
