import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import { useHermes, useModel, useTempDir, waitFor } from "../../helpers/fixture.js";
import { cleanUpTestFile, type Hermes, runCli, writeConfig } from "../../helpers/hermes.js";
import { MEMORY_CHAT, pluginSettings, RESTLESS } from "../../helpers/plugins.js";

interface ConnectorStatus {
  name: string;
  ok: boolean;
  detail: string;
}

describe("an error that escapes a plugin (its own timer, a promise it never awaits)", () => {
  let model: FakeModel;
  let dir: string;
  const withPlugins = (plugins: unknown[]) => pluginSettings(model.url, plugins);
  const connectorsOf = async (h: Hermes): Promise<ConnectorStatus[]> => JSON.parse((await h.cli(["status", "--json"])).stdout).connectors;
  const redOne = (h: Hermes, name: string) =>
    waitFor(async () => (await connectorsOf(h)).find((c) => c.name === name && !c.ok), { message: `${name} to turn red` });

  beforeEach(async () => {
    model = await useModel();
    dir = useTempDir();
  });
  afterAll(cleanUpTestFile);

  it("a throw in the plugin's own timer stops only that plugin: its health says why, the CLI and the other plugin keep working", async () => {
    const ticker = { name: "ticker", module: RESTLESS, options: { tag: "t1", fail: "timer" } };
    const fine = { name: "fine", module: MEMORY_CHAT, options: { room: "escapes-fine" } };
    const hermes = await useHermes(withPlugins([ticker, fine]), { dir });
    const red = await redOne(hermes, "ticker");
    expect(red.detail).toBe("stopped after an uncaught error in its own code: the ticker of t1 broke");
    const logged = await hermes.waitForLog((l) => String(l.msg).startsWith("plugin ticker failed outside any call from hermes"));
    expect(logged).toMatchObject({ plugin: "ticker", module: RESTLESS, level: 50 });
    await hermes.waitForLog((l) => l.msg === "restless stopped" && l.tag === "t1");
    expect((await hermes.cli(["status"])).stdout).toMatch(
      /ticker\s+\S+ plugin .*: stopped after an uncaught error in its own code: the ticker of t1 broke/,
    );
    model.script({ text: "still here" });
    expect((await hermes.ask("hi")).stdout).toBe("still here\n");
    const others = await connectorsOf(hermes);
    expect(others.find((c) => c.name === "fine")).toMatchObject({ ok: true, detail: "in room escapes-fine" });
    expect(others.find((c) => c.name === "cli")).toMatchObject({ ok: true });
    expect(hermes.process.exitCode).toBeNull();
  });

  it("a throw from a timer the old instance left is its own, not the instance a reload made in its place", async () => {
    const leaky = (tag: string, fail?: string) => ({ name: "leaky", module: RESTLESS, options: { tag, ...(fail && { fail }) } });
    const hermes = await useHermes(withPlugins([leaky("old", "leftover")]), { dir });
    await hermes.waitForLog((l) => l.msg === "restless started" && l.tag === "old");
    writeConfig(hermes.dir, withPlugins([leaky("new")]));
    hermes.process.kill("SIGHUP");
    await hermes.waitForLog((l) => l.msg === "restless started" && l.tag === "new");
    const ignored = await hermes.waitForLog((l) => String(l.msg).startsWith("plugin leaky (stopped) raised another uncaught error"));
    expect(String((ignored.err as { message?: string }).message)).toContain("a timer old forgot");
    expect((await connectorsOf(hermes)).find((c) => c.name === "leaky")).toMatchObject({ ok: true, detail: "steady (new)" });
    expect(hermes.process.exitCode).toBeNull();
  });

  it("a rejection nobody awaits in the plugin turns its health red with the reason; the daemon answers on", async () => {
    const promiser = { name: "promiser", module: RESTLESS, options: { tag: "p1", fail: "rejection" } };
    const hermes = await useHermes(withPlugins([promiser]), { dir });
    const red = await redOne(hermes, "promiser");
    expect(red.detail).toBe("stopped after an unhandled rejection in its own code: a promise of p1 nobody awaits");
    expect(hermes.logs.some((l) => l.msg === "unhandled rejection (kept running)")).toBe(false);
    model.script({ text: "answering" });
    expect((await hermes.ask("are you there?")).stdout).toBe("answering\n");
  });

  it("a socket the plugin made without an 'error' listener, or a string its timer throws, stops only that plugin", async () => {
    const socket = { name: "socket", module: RESTLESS, options: { tag: "s1", fail: "socket" } };
    const thrower = { name: "thrower", module: RESTLESS, options: { tag: "s2", fail: "string" } };
    const hermes = await useHermes(withPlugins([socket, thrower]), { dir });
    expect((await redOne(hermes, "socket")).detail).toMatch(/^stopped after an uncaught error in its own code: .*ECONNREFUSED/);
    expect((await redOne(hermes, "thrower")).detail).toBe("stopped after an uncaught error in its own code: the string of s2");
    model.script({ text: "still answering" });
    expect((await hermes.ask("hi")).stdout).toBe("still answering\n");
    expect(hermes.process.exitCode).toBeNull();
  });

  it("an uncaught exception thrown outside any plugin still exits 1, so systemd restarts a clean process", async () => {
    const config = writeConfig(dir, withPlugins([{ name: "bystander", module: RESTLESS, options: { tag: "b1", fail: "elsewhere" } }]));
    const run = await runCli(["start", "--config", config], { cwd: dir });
    expect(run.code).toBe(1);
    expect(`${run.stdout}${run.stderr}`).toContain("not the plugin's fault (b1)");
    expect(run.stdout).not.toContain("failed outside any call from hermes");
  });
});
