import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import { useHermes, useModel, useTempDir } from "../../helpers/fixture.js";
import { cleanUpTestFile, type Hermes, writeConfig } from "../../helpers/hermes.js";
import { MEMORY_CHAT, pluginSettings, RESTLESS } from "../../helpers/plugins.js";

type Line = Record<string, unknown>;

describe("a config reload (SIGHUP) and connectors.plugins", () => {
  let model: FakeModel;
  let dir: string;
  let hermes: Hermes | undefined;
  const withPlugins = (plugins: unknown[]) => pluginSettings(model.url, plugins);
  /** Writes the new file, sends SIGHUP and returns the log lines from then until the reload's outcome. */
  const reload = async (plugins: unknown[]): Promise<Line[]> => {
    const h = hermes as Hermes;
    const before = h.logs.length;
    writeConfig(dir, withPlugins(plugins));
    h.process.kill("SIGHUP");
    const outcome = (l: Line) => l.msg === "config reloaded" || l.msg === "config reload rejected; keeping the running config";
    await h.waitForLog((l) => outcome(l) && h.logs.indexOf(l) >= before);
    return h.logs.slice(before);
  };
  const plugins = async () =>
    (JSON.parse((await (hermes as Hermes).cli(["status", "--json"])).stdout).connectors as Line[]).filter((c) => c.module);
  const restless = (lines: Line[], msg: string) => lines.filter((l) => l.msg === msg).map((l) => l.tag);

  beforeEach(async () => {
    model = await useModel();
    dir = useTempDir();
    hermes = undefined;
  });
  afterAll(cleanUpTestFile);

  it("starts an added entry, stops a removed one, and makes one whose module or options changed again", async () => {
    const keep = { name: "keep", module: RESTLESS, options: { tag: "k1" } };
    hermes = await useHermes(
      withPlugins([
        keep,
        { name: "gone", module: RESTLESS, options: { tag: "g1" } },
        { name: "opts", module: RESTLESS, options: { tag: "o1" } },
        { name: "mod", module: MEMORY_CHAT, options: { room: "reload-m1" } },
      ]),
      { dir },
    );
    const lines = await reload([
      { ...keep, allowed_users: ["alice"] },
      { name: "opts", module: RESTLESS, options: { tag: "o2" } },
      { name: "mod", module: RESTLESS, options: { tag: "m2" } },
      { name: "new", module: MEMORY_CHAT, options: { room: "reload-n1" } },
    ]);
    expect(lines.find((l) => l.msg === "config reloaded")?.plugins).toEqual({
      started: ["new"],
      stopped: ["gone"],
      restarted: ["opts", "mod"],
    });
    expect(restless(lines, "restless stopped").sort()).toEqual(["g1", "o1"]);
    expect(restless(lines, "restless started").sort()).toEqual(["m2", "o2"]);
    expect(await plugins()).toEqual([
      { name: "keep", ok: true, detail: "steady (k1)", module: RESTLESS, version: expect.any(String) },
      { name: "opts", ok: true, detail: "steady (o2)", module: RESTLESS, version: expect.any(String) },
      { name: "mod", ok: true, detail: "steady (m2)", module: RESTLESS, version: expect.any(String) },
      { name: "new", ok: true, detail: "in room reload-n1", module: MEMORY_CHAT, version: "2.3.4" },
    ]);
    model.script({ text: "after the reload" });
    expect((await hermes.ask("hi")).stdout).toBe("after the reload\n");
  });

  it("refuses a reload whose new entry cannot be loaded, with the entry, module and fix, and keeps the running plugins", async () => {
    hermes = await useHermes(withPlugins([{ name: "running", module: RESTLESS, options: { tag: "r1" } }]), { dir });
    const lines = await reload([
      { name: "running", module: RESTLESS, options: { tag: "r2" } },
      { name: "broken", module: "./plugins/nowhere.mjs" },
    ]);
    const refused = lines.find((l) => l.msg === "config reload rejected; keeping the running config");
    expect(refused?.detail).toMatch(
      /plugin 'broken' \(module \.\/plugins\/nowhere\.mjs\): no file \/.*\/plugins\/nowhere\.mjs; fix: correct the path/,
    );
    expect(restless(lines, "restless stopped")).toEqual([]);
    expect(restless(lines, "restless started")).toEqual([]);
    expect(await plugins()).toEqual([{ name: "running", ok: true, detail: "steady (r1)", module: RESTLESS, version: expect.any(String) }]);
  });
});
