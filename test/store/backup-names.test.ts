/**
 * Backups and restores within one second: a second restore put its aside copy over the first one's (the
 * database as it was before either, lost), and of two backups of one second the newer was the one pruned.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { backupInto, restoreDatabase } from "../../src/store/backup.js";
import { openStore } from "../../src/store/store.js";
import { useTempDir } from "../helpers/fixture.js";

describe("backups and restores within one second", () => {
  it("a second restore keeps the first one's aside copy, the database as it was before both", async () => {
    const dir = useTempDir();
    const target = join(dir, "hermes.db");
    const original = openStore(target);
    original.notes.add("the original");
    original.close();
    const backup = (text: string) => {
      const store = openStore(join(dir, `${text}.db`));
      store.notes.add(text);
      const made = backupInto(store.db, { keep: 5, dir: join(dir, text) }).finally(() => store.close());
      return made;
    };
    const [a, b] = [await backup("a"), await backup("b")];
    const now = new Date("2026-12-06T06:00:00Z");
    const first = restoreDatabase(a.path, target, now);
    const second = restoreDatabase(b.path, target, now);
    expect(second.aside).not.toBe(first.aside);
    const notesOf = (path: string) => {
      const store = openStore(path);
      try {
        return store.notes.list().map((n) => n.text);
      } finally {
        store.close();
      }
    };
    expect(notesOf(first.aside as string)).toEqual(["the original"]);
    expect(notesOf(second.aside as string)).toEqual(["a"]);
    expect(notesOf(target)).toEqual(["b"]);
  });

  it("of two backups made in one second, the older is pruned", async () => {
    const dir = useTempDir();
    const store = openStore(join(dir, "hermes.db"));
    const now = new Date("2026-12-06T06:00:00Z");
    const settings = { keep: 1, dir: join(dir, "backups") };
    const first = await backupInto(store.db, settings, now);
    const second = await backupInto(store.db, settings, now);
    store.close();
    expect(second.pruned).toEqual([first.path]);
    expect(existsSync(second.path)).toBe(true);
    expect(readdirSync(settings.dir)).toEqual(["hermes-20261206-060000-1.db"]);
  });
});
