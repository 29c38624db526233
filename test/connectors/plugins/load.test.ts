import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import { useHermes, useModel, useTempDir } from "../../helpers/fixture.js";
import { baseSettings, runCli, writeConfig } from "../../helpers/hermes.js";
import { PLUGIN_FIXTURES as FIXTURES, MEMORY_CHAT, pluginSettings } from "../../helpers/plugins.js";

describe("connector plugins from the config", () => {
  let model: FakeModel;
  let dir: string;
  const withPlugins = (plugins: unknown[], extra: Record<string, unknown> = {}) => pluginSettings(model.url, plugins, extra);
  const configCheck = (settings: Record<string, unknown>) => runCli(["config", "check", "--config", writeConfig(dir, settings)]);

  beforeEach(async () => {
    model = await useModel();
    dir = useTempDir();
  });

  it("loads a plugin by a path relative to hermes.yaml; status lists it with its module, version and health", async () => {
    mkdirSync(join(dir, "plugins"));
    cpSync(join(FIXTURES, "memory-chat"), join(dir, "plugins/memory-chat"), { recursive: true });
    const entry = { name: "mem", module: "./plugins/memory-chat/index.js", allowed_users: ["alice"], options: { room: "r1" } };
    expect((await configCheck(withPlugins([entry]))).code).toBe(0);
    const hermes = await useHermes(withPlugins([entry]), { dir });
    const status = await hermes.cli(["status", "--json"]);
    const mem = JSON.parse(status.stdout).connectors.find((c: { name: string }) => c.name === "mem");
    expect(mem).toEqual({ name: "mem", ok: true, detail: "in room r1", module: "./plugins/memory-chat/index.js", version: "2.3.4" });
    expect((await hermes.cli(["status"])).stdout).toMatch(/mem\s+ok plugin \.\/plugins\/memory-chat\/index\.js 2\.3\.4: in room r1/);
  });

  it("loads a plugin by a path to its folder, read as a package: its package.json's entry", async () => {
    cpSync(join(FIXTURES, "memory-chat"), join(dir, "plugins/memory-chat"), { recursive: true });
    const entry = { name: "mem", module: "./plugins/memory-chat", options: { room: "r3" } };
    const check = await configCheck(withPlugins([entry]));
    expect(check.stderr).toBe("");
    expect(check.code).toBe(0);
    const hermes = await useHermes(withPlugins([entry]), { dir });
    expect((await hermes.cli(["status"])).stdout).toMatch(/mem\s+ok plugin \.\/plugins\/memory-chat 2\.3\.4: in room r3/);
  });

  it("loads a plugin whose module waits at its top level (an ES module that require() cannot load)", async () => {
    mkdirSync(join(dir, "plugins"));
    const chat = pathToFileURL(join(FIXTURES, "memory-chat/index.js")).href;
    writeFileSync(
      join(dir, "plugins/late.mjs"),
      `const { default: chat } = await import(${JSON.stringify(chat)});\nexport default chat;\n`,
    );
    const entry = { name: "mem", module: "./plugins/late.mjs", options: { room: "r4" } };
    expect((await configCheck(withPlugins([entry]))).code).toBe(0);
    const hermes = await useHermes(withPlugins([entry]), { dir });
    expect((await hermes.cli(["status"])).stdout).toMatch(/mem\s+ok plugin \.\/plugins\/late\.mjs -: in room r4/);
  });

  it("loads a plugin by package name from node_modules beside hermes.yaml", async () => {
    cpSync(join(FIXTURES, "memory-chat"), join(dir, "node_modules/hermes-connector-memory-chat"), { recursive: true });
    const entry = { name: "mem", module: "hermes-connector-memory-chat", options: { room: "r2" } };
    const check = await configCheck(withPlugins([entry]));
    expect(check.stderr).toBe("");
    expect(check.code).toBe(0);
    const hermes = await useHermes(withPlugins([entry]), { dir });
    const doctor = await hermes.cli(["doctor"]);
    expect(doctor.stdout).toMatch(/plugin mem module hermes-connector-memory-chat 2\.3\.4 loads \(api 1\); healthy: in room r2/);
  });

  it.each([
    [
      "a missing module",
      "./plugins/nowhere.mjs",
      /plugin 'mem' \(module \.\/plugins\/nowhere\.mjs\): no file \/.*\/plugins\/nowhere\.mjs; fix: correct the path; a relative one counts from hermes\.yaml's folder/,
    ],
    [
      "a missing package",
      "hermes-connector-nowhere",
      /no package 'hermes-connector-nowhere' in node_modules; fix: install it next to hermes\.yaml/,
    ],
    [
      "a folder with no entry",
      join(FIXTURES, "bad-api"),
      /the folder \/.*\/bad-api has no package\.json and no index\.js; fix: build the plugin, or give the path of its entry file/,
    ],
    [
      "an unsupported api",
      join(FIXTURES, "bad-api/plugin.mjs"),
      /declares api 2, this hermes supports api 1; fix: install a version of the plugin written for api 1/,
    ],
    [
      "no create",
      join(FIXTURES, "no-create.cjs"),
      /its default export has no create\(host, options\); fix: export default \{ api: 1, create/,
    ],
  ])("refuses %s at config check and at start, naming the entry, the module and the fix", async (_what, module, message) => {
    const settings = withPlugins([{ name: "mem", module }]);
    const check = await configCheck(settings);
    expect(check.code).toBe(1);
    expect(check.stderr).toMatch(/hermes\.yaml:\d+:\d+: connectors\.plugins\.0\.module: /);
    expect(check.stderr).toMatch(message);
    const start = await runCli(["start", "--config", join(dir, "hermes.yaml")]);
    expect(start.code).toBe(1);
    expect(start.stderr).toMatch(message);
  });

  it("reports an option the plugin's schema rejects at its file:line:col and key path", async () => {
    const yaml = [
      "model: { provider: ollama, base_url: 'http://127.0.0.1:9', name: m }",
      "connectors:",
      "  plugins:",
      "    - name: mem",
      `      module: ${MEMORY_CHAT}`,
      "      options:",
      "        room: r3",
      "        fail: sometimes",
      "",
    ].join("\n");
    writeFileSync(join(dir, "hermes.yaml"), yaml);
    const check = await runCli(["config", "check", "--config", join(dir, "hermes.yaml")]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(
      `${join(dir, "hermes.yaml")}:8:15: connectors.plugins.0.options.fail: plugin 'mem': must be equal to one of the allowed values`,
    );
  });

  it("refuses a plugin whose options schema is not a valid JSON Schema, naming the entry", async () => {
    const module = join(dir, "bad-schema.mjs");
    writeFileSync(
      module,
      `export default { api: 1, optionsSchema: { type: "object", properties: { room: { type: "strnig" } } }, create() { return { async start() {}, async stop() {}, async send() { return { id: "1" }; } }; } };\n`,
    );
    const check = await configCheck(withPlugins([{ name: "bad", module, allowed_users: ["a"], options: { room: "r" } }]));
    expect(check.code).toBe(1);
    expect(check.stderr).toMatch(/plugin 'bad': the plugin's options schema is not a valid JSON Schema: .*type/);
  });

  it("accepts deliver: <plugin>:<chat> for jobs, and names a target no connector has", async () => {
    const entry = { name: "mem", module: MEMORY_CHAT, options: { room: "r6" } };
    const job = (deliver: string) => ({
      cron: { enabled: true, jobs: [{ name: "brief", schedule: "0 7 * * *", prompt: "brief me", deliver }] },
    });
    const good = withPlugins([entry]);
    (good.connectors as Record<string, unknown>).cron = job("mem:kitchen").cron;
    expect((await configCheck(good)).code).toBe(0);
    const bad = withPlugins([entry]);
    (bad.connectors as Record<string, unknown>).cron = job("nope:kitchen").cron;
    const check = await configCheck(bad);
    expect(check.code).toBe(1);
    expect(check.stderr).toMatch(
      /connectors\.cron\.jobs\.0\.deliver: unknown delivery target prefix 'nope': known prefixes are telegram, discord, cli, email, mem/,
    );
  });

  it("keeps the daemon and the other connectors up when a plugin throws in start", async () => {
    model.script({ text: "still here" });
    const entry = { name: "mem", module: MEMORY_CHAT, options: { room: "r4", fail: "start" } };
    const hermes = await useHermes(withPlugins([entry]), { dir });
    const status = JSON.parse((await hermes.cli(["status", "--json"])).stdout);
    expect(status.connectors.find((c: { name: string }) => c.name === "mem")).toMatchObject({
      ok: false,
      detail: "start failed: the room is closed (fail: start)",
    });
    expect(status.connectors.find((c: { name: string }) => c.name === "cli")).toMatchObject({ ok: true });
    expect((await hermes.ask("hi")).stdout).toBe("still here\n");
  });

  it("says so when no connector works, instead of starting in silence", async () => {
    const entry = { name: "mem", module: MEMORY_CHAT, options: { room: "r5", fail: "start" } };
    const settings = { ...baseSettings(model.url), connectors: { cli: { enabled: false }, cron: { enabled: false }, plugins: [entry] } };
    const hermes = await useHermes(settings, { dir });
    const line = hermes.logs.find((l) => /no connector is working/.test(String(l.msg)));
    expect(line?.level).toBe(50);
    expect(JSON.stringify(line?.connectors)).toContain("start failed: the room is closed");
  });
});
