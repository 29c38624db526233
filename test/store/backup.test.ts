import { copyFileSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { Client } from "../../src/cli/client.js";
import { backupDatabase, restoreDatabase } from "../../src/store/backup.js";
import { openStore } from "../../src/store/store.js";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, createTempDir, readDb } from "../helpers/hermes.js";
import { waitFor } from "../helpers/wait.js";

describe("backups, restore and export", () => {
  let model: FakeModel;

  beforeEach(async () => {
    model = await useModel();
  });

  it("backs up during 20 concurrent chats; the restore passes integrity_check and holds every message acknowledged before", async () => {
    model.respond((req) => ({ text: `ack ${req.messages.at(-1)?.content.split("\n")[0]}`, delayMs: 1 }));
    const settings = baseSettings(model.url);
    // An old chat of ~8 MB, so the copy takes many steps with the new chats' writes in between.
    const dir = createTempDir().path;
    const seed = openStore(join(dir, "data", "hermes.db"));
    const old = seed.history.activeSession("cli:old").id;
    seed.db.transaction(() => {
      for (let i = 0; i < 8000; i++) seed.history.appendMessage(old, null, { role: "user", content: `old ${i} ${"o".repeat(1000)}` });
    })();
    seed.close();
    const h = await useHermes({ ...settings, model: { ...(settings.model as object), concurrency: 4 } }, { dir });
    const client = await Client.connect(h.socketPath);
    const acked = new Map<string, string>();
    let running = true;
    const chatter = async (n: number) => {
      for (let i = 0; running; i++) {
        const text = `chat ${n} message ${i}`;
        await client.stream({ op: "ask", session: `s${n}`, text }, (reply) => {
          if (reply.type !== "done") return false;
          acked.set(reply.run_id, text);
          return true;
        });
      }
    };
    const load = Promise.all(Array.from({ length: 20 }, (_, n) => chatter(n)));
    await waitFor(() => acked.size >= 60, { everyMs: 20, message: () => `60 chats acknowledged (${acked.size} were)` });
    const before = new Map(acked);
    const path = join(h.dir, "copy.db");
    const made = await h.cli(["backup", path]);
    const during = acked.size - before.size;
    running = false;
    await load;
    client.close();
    expect(made.stderr).toBe("");
    expect(made.stdout).toMatch(/^backup written to .*copy\.db \(\d+ bytes, integrity_check ok, \d+ ms\)\n$/);
    expect(made.code).toBe(0);
    expect(during).toBeGreaterThan(0); // the chats went on while the copy was made
    expect(Number(made.stdout.match(/\((\d+) bytes/)?.[1])).toBeGreaterThan(8_000_000);

    const refused = await h.cli(["restore", path]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("hermes is running: stop it first");
    expect(await h.stop()).toBe(0);
    const total = readDb(h.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM runs").pluck().get() as number);

    const restored = await h.cli(["restore", path]);
    expect(restored.stderr).toBe("");
    expect(restored.code).toBe(0);
    const aside = restored.stdout.match(/kept as (\S+)\n$/)?.[1] ?? "";
    expect(existsSync(aside)).toBe(true);
    readDb(h.dbPath, (db) => {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      const run = db.prepare("SELECT status, reply FROM runs WHERE id = ?");
      const asked = db.prepare("SELECT content FROM messages WHERE run_id = ? AND role = 'user'").pluck();
      for (const [runId, text] of before) {
        expect(run.get(runId)).toEqual({ status: "done", reply: `ack ${text}` });
        expect(String(asked.get(runId))).toMatch(new RegExp(`^${text}\\n`));
      }
      expect(db.prepare("SELECT COUNT(*) FROM runs").pluck().get()).toBeLessThanOrEqual(total);
    });
    // The replaced database is kept whole beside it.
    expect(readDb(aside, (db) => db.prepare("SELECT COUNT(*) FROM runs").pluck().get())).toBe(total);
    const restarted = await h.restart();
    expect((await restarted.ask("still there?", "--session", "s0")).stdout).toBe("ack still there?\n");
  }, 120_000);

  it("refuses to restore from a database with a write-ahead log beside it, and puts a stale journal of the target aside", async () => {
    const dir = createTempDir();
    onTestFinished(dir.cleanup);
    const live = join(dir.path, "live.db");
    const store = openStore(live);
    onTestFinished(() => store.close());
    store.memory.saveRatio("m", 1.25);
    // Open: the write is still in live.db-wal, which a copy of live.db alone would lose.
    expect(() => restoreDatabase(live, join(dir.path, "target.db"))).toThrow(/write-ahead log beside it/);
    expect(existsSync(join(dir.path, "target.db"))).toBe(false);
    const backup = join(dir.path, "backup.db");
    await backupDatabase(store.db, backup);
    const target = join(dir.path, "target.db");
    copyFileSync(backup, target);
    writeFileSync(`${target}-journal`, "a journal the old database left behind");
    const { aside } = restoreDatabase(backup, target);
    expect(existsSync(`${target}-journal`)).toBe(false);
    expect(readFileSync(`${aside}-journal`, "utf8")).toBe("a journal the old database left behind");
    expect(readDb(target, (db) => db.prepare("SELECT ratio FROM token_calibration").pluck().get())).toBe(1.25);
  });

  it("refuses to restore a file that is not a sound hermes database, and leaves the database alone", async () => {
    const hermes = await useHermes(baseSettings(model.url));
    expect((await hermes.ask("remember this chat")).code).toBe(0);
    await hermes.stop();
    const junk = join(hermes.dir, "junk.db");
    writeFileSync(junk, "this is not a database at all, just text that is long enough ".repeat(200));
    const refused = await hermes.cli(["restore", junk]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^hermes: not restored: .*junk\.db is not a (readable )?SQLite database/);
    const missing = await hermes.cli(["restore", join(hermes.dir, "nope.db")]);
    expect(missing).toMatchObject({ code: 1 });
    expect(missing.stderr).toContain("does not exist");
    expect(readDb(hermes.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM runs").pluck().get())).toBe(1);
    expect(readdirSync(join(hermes.dir, "data")).some((f) => f.includes("replaced"))).toBe(false);
  }, 60_000);

  it("refuses a backup onto the live database, its WAL or a file that is not a hermes backup; replaces an earlier backup", async () => {
    const hermes = await useHermes(baseSettings(model.url));
    expect((await hermes.ask("before")).code).toBe(0);
    const data = join(hermes.dir, "data");
    symlinkSync(data, join(hermes.dir, "link"));
    for (const target of [hermes.dbPath, `${hermes.dbPath}-wal`, `${hermes.dbPath}-shm`, join(hermes.dir, "link", "hermes.db")]) {
      const refused = await hermes.cli(["backup", target]);
      expect(refused).toMatchObject({ code: 1, stdout: "" });
      expect(refused.stderr).toBe(
        `backup failed: ${target} is a file of the database hermes uses (${hermes.dbPath}); a backup goes elsewhere\n`,
      );
    }
    const config = readFileSync(hermes.configPath, "utf8");
    const notOurs = await hermes.cli(["backup", hermes.configPath]);
    expect(notOurs.code).toBe(1);
    expect(notOurs.stderr).toBe(`backup failed: ${hermes.configPath} exists and is not a hermes backup; it is left as it is\n`);
    expect(readFileSync(hermes.configPath, "utf8")).toBe(config);
    const copy = join(hermes.dir, "copy.db");
    expect((await hermes.cli(["backup", copy])).code).toBe(0);
    expect((await hermes.ask("between")).code).toBe(0);
    expect((await hermes.cli(["backup", copy])).code).toBe(0); // an earlier backup may be replaced
    expect((await hermes.cli(["backup"])).code).toBe(0);
    expect((await hermes.ask("after")).code).toBe(0);
    await hermes.stop();
    expect(readDb(hermes.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM runs").pluck().get())).toBe(3);
    expect(readDb(copy, (db) => db.prepare("SELECT COUNT(*) FROM runs").pluck().get())).toBe(2);
    expect(readdirSync(join(data, "backups"))).toHaveLength(1);

    // With the daemon stopped the command makes the copy itself, and refuses the same.
    const offline = await hermes.cli(["backup", join(hermes.dir, "link", "hermes.db")]);
    expect(offline.code).toBe(1);
    expect(offline.stderr).toContain("is a file of the database hermes uses");
    // Another hermes' database (in WAL mode, as hermes runs it) is not a backup either.
    const other = join(hermes.dir, "other.db");
    copyFileSync(hermes.dbPath, other);
    const overOther = await hermes.cli(["backup", other]);
    expect(overOther.code).toBe(1);
    expect(overOther.stderr).toContain("exists and is not a hermes backup");
    // Restoring the database onto itself is refused, and nothing is put aside.
    const onto = await hermes.cli(["restore", join(hermes.dir, "link", "hermes.db")]);
    expect(onto.code).toBe(1);
    expect(onto.stderr).toContain("is a file of the database it would replace");
    expect(readdirSync(data).some((f) => f.includes("replaced"))).toBe(false);
    expect(readDb(hermes.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM runs").pluck().get())).toBe(3);
  }, 60_000);

  it("answers a backup into a folder that cannot be made under /proc with an error, and goes on", async () => {
    const hermes = await useHermes(baseSettings(model.url));
    // A daemon that hangs in the copy is killed, so that the command ends and the test fails instead of hanging.
    const deadline = setTimeout(() => void hermes.kill(), 15_000);
    onTestFinished(() => clearTimeout(deadline));
    const made = await hermes.cli(["backup", "/proc/hermes-nowhere/backups/copy.db"]);
    clearTimeout(deadline);
    expect(made.stderr).toBe("backup failed: ENOENT: no such file or directory, mkdir '/proc/hermes-nowhere'\n");
    expect(made.code).toBe(1);
    expect((await hermes.ask("still there?")).code).toBe(0);
  }, 60_000);

  it("makes backups on storage.backup's schedule and keeps the newest N; backs up a stopped daemon's database too", async () => {
    const dir = "./data/backups";
    const hermes = await useHermes({ ...baseSettings(model.url), storage: { backup: { schedule: "* * * * * *", keep: 2, dir } } });
    const h = hermes;
    await h.waitForLog(() => h.logs.filter((l) => l.msg === "backup made").length >= 3);
    await h.stop();
    const files = readdirSync(join(h.dir, "data", "backups"));
    expect(files).toHaveLength(2);
    expect(files.every((f) => /^hermes-\d{8}-\d{6}(-\d+)?\.db$/.test(f))).toBe(true);
    for (const f of files)
      expect(readDb(join(h.dir, "data", "backups", f), (db) => db.pragma("integrity_check", { simple: true }))).toBe("ok");
    const offline = await h.cli(["backup", join(h.dir, "offline.db")]);
    expect(offline.code).toBe(0);
    expect(offline.stdout).toContain("integrity_check ok");
  }, 60_000);

  it("exports conversations as Markdown and JSON, one session or all", async () => {
    const hermes = await useHermes(baseSettings(model.url));
    model.script({ text: "Hello **there**." }, { text: "Second answer." }, { text: "Other." });
    await hermes.ask("first question", "--session", "a");
    await hermes.ask("second question", "--session", "a");
    await hermes.ask("elsewhere", "--session", "b");
    const json = await hermes.cli(["export", "--session", "cli:a", "--format", "json"]);
    expect(json.code).toBe(0);
    const data = JSON.parse(json.stdout) as { sessions: { key: string; messages: { role: string; content: string }[] }[] };
    expect(data.sessions.map((s) => s.key)).toEqual(["cli:a"]);
    expect(data.sessions[0]?.messages.map((m) => [m.role, m.content.split("\n")[0]])).toEqual([
      ["user", "first question"],
      ["assistant", "Hello **there**."],
      ["user", "second question"],
      ["assistant", "Second answer."],
    ]);
    const md = await hermes.cli(["export"]);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain("# cli:a (session 1)");
    expect(md.stdout).toContain("# cli:b (session 2)");
    // The user's own words: the time note the runner appends for the model is left out (JSON keeps the stored text).
    expect(md.stdout).toMatch(/\*\*You\*\* \([\d-]+ [\d:]+\):\n\nfirst question\n\n\*\*hermes\*\*/);
    expect(md.stdout).not.toContain("Current time");
    expect(data.sessions[0]?.messages[0]?.content).toMatch(/^first question\n\n\(Current time: .*\)$/);
    expect(md.stdout).toContain("**hermes**");
    expect((await hermes.cli(["export", "--session", "cli:none"])).code).toBe(1);
    expect((await hermes.cli(["export", "--format", "pdf"])).code).toBe(2);
  }, 60_000);
});
