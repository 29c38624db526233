/**
 * A database a newer hermes wrote (after a downgrade, or a backup of a newer one restored) was opened as if it
 * were this version's, and restored without a word: what its later migrations changed is unknown here.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { restoreDatabase } from "../../src/store/backup.js";
import { openDatabase, SCHEMA_VERSION } from "../../src/store/db.js";
import { openStore } from "../../src/store/store.js";
import { useHermes, useModel, useTempDir } from "../helpers/fixture.js";
import { baseSettings, runCli } from "../helpers/hermes.js";

function newerDatabase(path: string): number {
  const store = openStore(path);
  const future = SCHEMA_VERSION + 1;
  store.db
    .prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)")
    .run(future, "from a newer hermes", Date.now());
  store.close();
  return future;
}

describe("a database from a newer hermes", () => {
  it("is not opened: the owner is told to upgrade hermes or restore a backup from this version", () => {
    const path = join(useTempDir(), "hermes.db");
    const future = newerDatabase(path);
    expect(() => openDatabase(path)).toThrow(
      `${path}: written by a newer hermes (database schema ${future}; this hermes knows up to ${SCHEMA_VERSION}): upgrade hermes again, or restore a backup this version made`,
    );
  });

  it("is not restored, and the database in use stays", async () => {
    const model = await useModel();
    const hermes = await useHermes(baseSettings(model.url));
    const backup = join(useTempDir(), "backup.db");
    newerDatabase(backup);
    expect(() => restoreDatabase(backup, join(useTempDir(), "target.db"))).toThrow(`${backup} was written by a newer hermes`);
    await hermes.stop();
    const refused = await runCli(["restore", backup, "--config", hermes.configPath], { cwd: hermes.dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("was written by a newer hermes");
    const again = await hermes.restart();
    expect((await again.ask("hello")).code).toBe(0);
  });
});

describe("a database file hermes cannot use", () => {
  it("is named at start, with what to do", async () => {
    const model = await useModel();
    const hermes = await useHermes(baseSettings(model.url));
    await hermes.stop();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(hermes.dbPath + suffix, { force: true });
    writeFileSync(
      hermes.dbPath,
      "these are not the pages of a database, only some text that is long enough to be read as a header\n".repeat(50),
    );
    const start = await runCli(["start", "--config", hermes.configPath], { cwd: hermes.dir });
    expect(start.code).toBe(1);
    expect(start.stderr).toContain(
      `hermes: cannot start: ${hermes.dbPath}: file is not a database (it is not a SQLite database: move it away`,
    );
  });
});
