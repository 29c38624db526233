/**
 * `hermes restore` asked the CLI socket whether the daemon runs. With the socket turned off it restored under a
 * running daemon, which went on writing to the file put aside: what the owner said after it was missing from
 * the database at the next start.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, readDb } from "../helpers/hermes.js";
import { baseUrlOf, bearer, httpEnv, httpSettings } from "../helpers/http.js";

describe("hermes restore while the daemon runs", () => {
  it("is refused also when the CLI socket is off: the daemon's claim on the database says it runs", async () => {
    const model = await useModel();
    model.respond((req) => ({ text: `ack ${req.messages.at(-1)?.content.split("\n")[0]}` }));
    const h = await useHermes(
      { ...baseSettings(model.url), connectors: { cli: { enabled: false }, cron: { enabled: false }, http: httpSettings() } },
      { env: httpEnv },
    );
    const base = await baseUrlOf(h);
    const ask = (text: string) =>
      fetch(`${base}/v1/ask`, {
        method: "POST",
        headers: { ...bearer(), "content-type": "application/json" },
        body: JSON.stringify({ session: "s", text }),
      }).then((r) => r.json() as Promise<{ reply: string }>);
    expect((await ask("before")).reply).toBe("ack before");
    const backup = join(h.dir, "copy.db");
    const made = await h.cli(["backup", backup], { env: httpEnv });
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);

    const restored = await h.cli(["restore", backup], { env: httpEnv });
    expect(restored.stderr).toContain(`hermes is running (pid ${h.process.pid}, using ${h.dbPath}): stop it first`);
    expect(restored.code).toBe(1);

    expect((await ask("after")).reply).toBe("ack after");
    await h.stop();
    const said = readDb(h.dbPath, (db) => db.prepare("SELECT content FROM messages WHERE role = 'user' ORDER BY id").pluck().all());
    expect((said as string[]).map((s) => s.split("\n")[0])).toEqual(["before", "after"]);
    // Once it is stopped, the restore goes through.
    expect((await h.cli(["restore", backup], { env: httpEnv })).code).toBe(0);
  }, 60_000);
});
