import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/db.js";
import { McpToolListStore } from "../../src/store/mcp-tools.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { PluginStore } from "../../src/store/plugins.js";
import { RecentStore } from "../../src/store/recent.js";
import { prepareAll, statements } from "../../src/store/statements.js";
import { openStore } from "../../src/store/store.js";
import { createTempDir } from "../helpers/hermes.js";

describe("the store", () => {
  const dirs: { cleanup: () => void }[] = [];
  const tempDb = () => {
    const dir = createTempDir();
    dirs.push(dir);
    return join(dir.path, "sub", "hermes.db");
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) d.cleanup();
  });

  it("opens in WAL mode with a busy timeout and applies every migration once", () => {
    const path = tempDb();
    const db = openDatabase(path);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("busy_timeout", { simple: true })).toBe(5000);
    const versions = db.prepare("SELECT version FROM schema_migrations ORDER BY version").pluck().all();
    expect(versions).toEqual(MIGRATIONS.map((m) => m.version));
    db.close();
    const again = openDatabase(path);
    expect(again.prepare("SELECT COUNT(*) FROM schema_migrations").pluck().get()).toBe(MIGRATIONS.length);
    again.close();
  });

  it("prepares each statement at its first use, and every statement of every store against the migrated schema", () => {
    const store = openStore(tempDb());
    const { db } = store;
    new PluginStore(db);
    new McpToolListStore(db);
    new RecentStore(db);
    const bad = statements(db, { typo: () => db.prepare("SELECT nope FROM runs") });
    expect(() => bad.typo).toThrow(/no such column: nope/);
    expect(() => prepareAll(db)).toThrow(/no such column: nope/);
    const checked = openStore(tempDb());
    new PluginStore(checked.db);
    new McpToolListStore(checked.db);
    new RecentStore(checked.db);
    expect(prepareAll(checked.db)).toBeGreaterThan(60);
    const once = checked.history.activeSession("cli:default");
    expect(checked.history.activeSession("cli:default")).toEqual(once);
    store.close();
    checked.close();
  });

  it("keeps an inbound update's payload only until it is handled, also in a database from before", () => {
    const path = tempDb();
    const store = openStore(path);
    const updates = [1, 2, 3].map((update_id) => ({ update_id, message: { text: `message ${update_id}` } }));
    expect(store.inbound.recordBatch("telegram", updates, () => "42")).toHaveLength(3);
    store.inbound.markDone("telegram", 1, "run-1");
    expect(store.inbound.unfinished("telegram")).toEqual(updates.slice(1));
    expect(store.inbound.recordBatch("telegram", updates.slice(0, 1), () => "42")).toEqual([]); // seen: not again
    // As a daemon before this version left it: handled updates with their payloads.
    store.inbound.markDone("telegram", 2);
    store.db.prepare("UPDATE inbound_updates SET payload = ? WHERE update_id = 2").run(JSON.stringify(updates[1]));
    store.db.prepare("DELETE FROM schema_migrations WHERE version = 18").run();
    const payloads = () => store.db.prepare("SELECT payload FROM inbound_updates ORDER BY update_id").pluck().all();
    expect(payloads()).toEqual(["{}", JSON.stringify(updates[1]), JSON.stringify(updates[2])]);
    store.close();
    const reopened = openStore(path);
    expect(reopened.db.prepare("SELECT payload FROM inbound_updates ORDER BY update_id").pluck().all()).toEqual([
      "{}",
      "{}",
      JSON.stringify(updates[2]),
    ]);
    expect(reopened.inbound.unfinished("telegram")).toEqual([updates[2]]);
    reopened.close();
  });

  it("keeps a closed session's history when /new opens a fresh one", () => {
    const store = openStore(tempDb());
    const first = store.history.activeSession("telegram:1");
    store.history.appendMessage(first.id, null, { role: "user", content: "old" });
    const fresh = store.history.newSession("telegram:1");
    expect(fresh.id).not.toBe(first.id);
    expect(store.history.activeSession("telegram:1").id).toBe(fresh.id);
    expect(store.history.recentMessages(first.id, 10)).toEqual([{ role: "user", content: "old" }]);
    expect(store.history.recentMessages(fresh.id, 10)).toEqual([]);
    store.close();
  });

  it("round-trips assistant tool calls and tool results", () => {
    const store = openStore(tempDb());
    const s = store.history.activeSession("cli:x");
    const calls = [{ id: "c1", name: "clock", args: { timezone: "UTC" } }];
    store.history.appendMessage(s.id, null, { role: "assistant", content: "", toolCalls: calls });
    store.history.appendMessage(s.id, null, { role: "tool", content: "noon", toolCallId: "c1", toolName: "clock" });
    expect(store.history.recentMessages(s.id, 10)).toEqual([
      { role: "assistant", content: "", toolCalls: calls },
      { role: "tool", content: "noon", toolCallId: "c1", toolName: "clock" },
    ]);
    store.close();
  });

  it("gives a prompt every message from where its window starts, also past the newest 400 and after a restart", () => {
    const path = tempDb();
    let store = openStore(path);
    const s = store.history.activeSession("cli:long");
    const ids = Array.from({ length: 700 }, (_, i) => store.history.appendMessage(s.id, null, { role: "user", content: `m${i}` }));
    store.close();
    // A new process: nothing of the session in memory.
    store = openStore(path);
    const from = ids[100] as number;
    const window = store.history.windowMessages(s.id, from);
    expect(window.map((m) => m.content)).toEqual(Array.from({ length: 600 }, (_, i) => `m${i + 100}`));
    // Read once: the next message appends to it in memory, and the next request gets the same messages.
    store.history.appendMessage(s.id, null, { role: "user", content: "m700" });
    const next = store.history.windowMessages(s.id, from);
    expect(next).toHaveLength(601);
    expect(next[0]).toBe(window[0]);
    // Without a start, or with one among the newest 400: the newest 400.
    expect(store.history.windowMessages(s.id).map((m) => m.content)[0]).toBe("m301");
    expect(store.history.windowMessages(s.id, ids[650]).map((m) => m.content)[0]).toBe("m301");
    store.close();
  });
});
