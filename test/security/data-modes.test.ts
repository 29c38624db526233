/** The data folder, the database, its WAL and backups are private to hermes's user, whatever the umask. */
import { chmodSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { baseSettings, type Hermes, startHermes } from "../helpers/hermes.js";

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("file modes of the data hermes keeps", () => {
  let model: FakeModel;
  let hermes: Hermes | undefined;
  let umask: number;
  beforeEach(async () => {
    // As when started by hand from a shell: the daemon inherits this umask.
    umask = process.umask(0o022);
    model = await startFakeModel();
  });
  afterEach(async () => {
    if (hermes?.process.exitCode === null) await hermes.stop();
    hermes = undefined;
    await model.close();
    process.umask(umask);
  });

  it("creates the data folder 0700 and the database, WAL, shared memory and backups 0600", async () => {
    hermes = await startHermes({
      ...baseSettings(model.url),
      storage: { backup: { schedule: "* * * * * *", keep: 2, dir: "./data/backups" } },
    });
    const h = hermes;
    model.script({ text: "hello" });
    await h.ask("hi");
    await h.waitForLog((l) => l.msg === "backup made");
    const made = await h.cli(["backup", join(h.dir, "by-hand", "copy.db")]);
    expect(made.code).toBe(0);
    const data = join(h.dir, "data");
    expect(mode(data)).toBe("700");
    for (const suffix of ["", "-wal", "-shm"])
      expect([`hermes.db${suffix}`, mode(h.dbPath + suffix)]).toEqual([`hermes.db${suffix}`, "600"]);
    expect(mode(join(data, "backups"))).toBe("700");
    const backups = readdirSync(join(data, "backups"));
    expect(backups.length).toBeGreaterThan(0);
    for (const f of backups) expect([f, mode(join(data, "backups", f))]).toEqual([f, "600"]);
    expect(mode(join(h.dir, "by-hand"))).toBe("700");
    expect(mode(join(h.dir, "by-hand", "copy.db"))).toBe("600");
  });

  it("tightens a database left readable by an older version", async () => {
    hermes = await startHermes(baseSettings(model.url));
    await hermes.stop();
    chmodSync(hermes.dbPath, 0o644);
    hermes = await hermes.restart();
    expect(mode(hermes.dbPath)).toBe("600");
  });
});
