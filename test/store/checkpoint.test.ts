import { statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { WalCheckpointer } from "../../src/store/checkpoint.js";
import { openDatabase } from "../../src/store/db.js";
import { createTempDir } from "../helpers/hermes.js";

describe("WAL checkpoints", () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  function setUp(limitBytes?: number) {
    const dir = createTempDir();
    const path = join(dir.path, "hermes.db");
    const db = openDatabase(path);
    db.pragma("wal_autocheckpoint = 0");
    db.exec("CREATE TABLE t (x TEXT)");
    db.pragma("wal_checkpoint(TRUNCATE)");
    const insert = db.prepare("INSERT INTO t (x) VALUES (?)");
    const write = (rows: number) => {
      for (let i = 0; i < rows; i++) insert.run("x".repeat(500));
    };
    cleanups.push(() => {
      db.close();
      dir.cleanup();
    });
    const walBytes = () => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    return { path, db, write, walBytes, checkpointer: new WalCheckpointer(db, `${path}-wal`, limitBytes) };
  }

  it("waits while rows are being written and truncates the WAL at the first quiet look", () => {
    const { write, walBytes, checkpointer } = setUp();
    write(50);
    const written = walBytes();
    expect(written).toBeGreaterThan(0);
    expect(checkpointer.look()).toBe("busy");
    write(50);
    expect(checkpointer.look()).toBe("busy");
    expect(walBytes()).toBeGreaterThan(written);
    expect(checkpointer.look()).toBe("checkpointed");
    expect(walBytes()).toBe(0);
    expect(checkpointer.look()).toBe("empty");
  });

  it("checkpoints a WAL past its limit even while rows keep coming", () => {
    const { write, walBytes, checkpointer } = setUp(256 * 1024);
    write(20);
    expect(walBytes()).toBeLessThan(256 * 1024);
    expect(checkpointer.look()).toBe("busy");
    write(200);
    expect(walBytes()).toBeGreaterThan(256 * 1024);
    expect(checkpointer.look()).toBe("checkpointed");
    expect(walBytes()).toBe(0);
  });

  it("does not wait for a reader in another connection, and finishes once it has gone", () => {
    const { path, db, write, walBytes, checkpointer } = setUp();
    // Were the checkpoint to wait for the reader, this test would time out long before the minute is up.
    db.pragma("busy_timeout = 60000");
    const reader = new Database(path, { readonly: true });
    cleanups.unshift(() => reader.close());
    write(10);
    const read = reader.prepare("SELECT COUNT(*) FROM t").pluck();
    reader.exec("BEGIN");
    expect(read.get()).toBe(10);
    write(10);
    checkpointer.look();
    expect(checkpointer.look()).toBe("partial");
    expect(db.pragma("busy_timeout", { simple: true })).toBe(60000);
    expect(walBytes()).toBeGreaterThan(0);
    expect(read.get()).toBe(10);
    reader.exec("COMMIT");
    expect(checkpointer.look()).toBe("checkpointed");
    expect(walBytes()).toBe(0);
    expect(reader.prepare("SELECT COUNT(*) FROM t").pluck().get()).toBe(20);
  });
});
