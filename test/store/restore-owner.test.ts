/**
 * The service's data folder (StateDirectory) is its own user's, 0700: an owner runs `sudo hermes restore`.
 * The restored database was root's, and the service could not open it; `sudo hermes backup` made a backups
 * folder of root's, in which every later backup of the daemon failed.
 */
import { chownSync, existsSync, lstatSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { backupInto, restoreDatabase } from "../../src/store/backup.js";
import { openStore } from "../../src/store/store.js";
import { useTempDir } from "../helpers/fixture.js";

/** nobody, standing in for the `hermes` user of deploy/hermes.service. */
const SERVICE_UID = 65534;

describe.skipIf(process.getuid?.() !== 0)("files root makes in the service's data folder", () => {
  const serviceData = () => {
    const dir = join(useTempDir(), "state");
    const store = openStore(join(dir, "hermes.db"));
    store.notes.add("kept");
    chownSync(dir, SERVICE_UID, SERVICE_UID);
    chownSync(join(dir, "hermes.db"), SERVICE_UID, SERVICE_UID);
    return { dir, store };
  };

  it("a restored database belongs to the owner of the folder it goes to", async () => {
    const { dir, store } = serviceData();
    const { path } = await backupInto(store.db, { keep: 7, dir: join(dir, "..", "elsewhere") });
    store.close();
    expect(statSync(path).uid).toBe(0); // root's folder, root's backup
    restoreDatabase(path, join(dir, "hermes.db"));
    expect(statSync(join(dir, "hermes.db"))).toMatchObject({ uid: SERVICE_UID, gid: SERVICE_UID, mode: 0o100600 });
  });

  it("a backups folder made beside the database, and the backups in it, belong to the database folder's owner", async () => {
    const { dir, store } = serviceData();
    const done = await backupInto(store.db, { keep: 7, dir: join(dir, "backups") });
    store.close();
    expect(statSync(join(dir, "backups"))).toMatchObject({ uid: SERVICE_UID, mode: 0o40700 });
    expect(statSync(done.path)).toMatchObject({ uid: SERVICE_UID, mode: 0o100600 });
  });

  it("follows no link left in the service's folder, and gives away no file of root's", async () => {
    const dir = join(useTempDir(), "state");
    const outside = useTempDir();
    // The service's user plants links in its own folder, for root to write or chown through.
    const secret = join(outside, "root-secret");
    writeFileSync(secret, "root only\n", { mode: 0o600 });
    const preload = join(outside, "ld.so.preload");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(dir, { recursive: true });
    chownSync(dir, SERVICE_UID, SERVICE_UID);
    symlinkSync(secret, join(dir, "hermes.db"));
    symlinkSync(preload, join(dir, "hermes.db.restoring"));
    expect(() => openStore(join(dir, "hermes.db"))).toThrow(/hermes\.db is a symbolic link in a folder of another user/);
    expect(statSync(secret)).toMatchObject({ uid: 0, mode: 0o100600 });
    rmSync(join(dir, "hermes.db"));
    const source = openStore(join(outside, "source.db"));
    source.notes.add("restored");
    const { path } = await backupInto(source.db, { keep: 7, dir: join(outside, "backups") });
    source.close();
    restoreDatabase(path, join(dir, "hermes.db"));
    expect(existsSync(preload)).toBe(false);
    expect(lstatSync(join(dir, "hermes.db"))).toMatchObject({ uid: SERVICE_UID, mode: 0o100600 });
    expect(lstatSync(join(dir, "hermes.db")).isSymbolicLink()).toBe(false);
  });
});
