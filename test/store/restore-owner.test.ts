/**
 * The service's data folder (StateDirectory) is its own user's, 0700: an owner runs `sudo hermes restore`.
 * The restored database was root's, and the service could not open it; `sudo hermes backup` made a backups
 * folder of root's, in which every later backup of the daemon failed.
 */
import { chownSync, statSync } from "node:fs";
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
});
