/**
 * `hermes sessions list` showed the 50 sessions made last, however long unused, and said nothing of the rest:
 * after 50 stateless API requests (each leaves a closed session without messages) or 50 `/new`s, the chat in
 * use was not listed.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/store.js";
import { useHermes, useModel, useTempDir } from "../helpers/fixture.js";
import { baseSettings } from "../helpers/hermes.js";

describe("hermes sessions list", () => {
  it("lists the most recently used first, leaves out empty closed sessions, and says when --limit cut it", async () => {
    const model = await useModel();
    const dir = useTempDir();
    const seed = openStore(join(dir, "data", "hermes.db"));
    const main = seed.history.activeSession("telegram:42").id;
    seed.history.appendMessage(main, null, { role: "user", content: "hello" });
    for (let i = 0; i < 60; i++) seed.history.ephemeralSession(`api:~${i}`, []);
    for (let i = 0; i < 3; i++) {
      const other = seed.history.activeSession(`cli:old-${i}`).id;
      seed.history.appendMessage(other, null, { role: "user", content: `old ${i}` });
    }
    seed.history.appendMessage(main, null, { role: "user", content: "the newest message of all" });
    seed.close();
    const h = await useHermes(baseSettings(model.url), { dir });
    const listed = await h.cli(["sessions", "list", "--json"]);
    expect(listed.code).toBe(0);
    const keys = (JSON.parse(listed.stdout) as { key: string }[]).map((s) => s.key);
    expect(keys).toEqual(["telegram:42", "cli:old-2", "cli:old-1", "cli:old-0"]);
    const two = await h.cli(["sessions", "list", "--limit", "2"]);
    const lines = two.stdout.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^telegram:42 +#\d+ {2}open, 2 message\(s\)/);
    expect(lines[2]).toBe("(the 2 sessions used most recently; --limit N lists more)");
    const four = await h.cli(["sessions", "list", "--limit", "4"]);
    expect(four.stdout.trim().split("\n")).toHaveLength(4); // all of them: no note
    expect((await h.cli(["sessions", "list", "--limit", "0"])).stderr).toContain("--limit must be a positive integer");
  }, 60_000);
});
