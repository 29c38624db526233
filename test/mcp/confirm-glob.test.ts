/**
 * agent.confirm names MCP tools as tools.enabled does: exactly or by a `*` glob. A glob there was taken as
 * a plain name, matched no tool, and an MCP tool the owner meant to confirm ran without asking; an entry that
 * names no known tool or server was accepted without a word.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel, useTempDir } from "../helpers/fixture.js";
import { baseSettings } from "../helpers/hermes.js";

const STDIO_SERVER = resolve(import.meta.dirname, "../fakes/mcp-stdio-server.mjs");

describe("agent.confirm and MCP tools", () => {
  let model: FakeModel;
  let dir: string;
  const ledger = () => {
    const path = join(dir, "ledger.txt");
    return existsSync(path) ? readFileSync(path, "utf8").trim().split("\n") : [];
  };
  beforeEach(async () => {
    dir = useTempDir();
    model = await useModel();
  });

  it("a glob in agent.confirm (home__*) makes every tool of that server ask first, and hermes tools says so", async () => {
    const h = await useHermes(
      {
        ...baseSettings(model.url),
        agent: { confirm: ["home__*"] },
        tools: { enabled: ["home__*"] },
        mcp: {
          servers: {
            home: { command: process.execPath, args: [STDIO_SERVER], env: { MCP_LEDGER: join(dir, "ledger.txt") }, confirm: "never" },
          },
        },
      },
      { dir },
    );
    const tools = await h.cli(["tools", "--json"]);
    const listed = (JSON.parse(tools.stdout) as { tools: { name: string; asks: string }[] }).tools;
    expect(listed.find((t) => t.name === "home__set_light")).toMatchObject({ asks: "always" });
    model.script({ toolCalls: [{ name: "home__set_light", arguments: { room: "hall", on: true } }] }, { text: "done" });
    const asked = await h.ask("hall light on", "--no");
    expect(asked.stderr).toMatch(/hermes wants to run home__set_light/);
    expect(ledger()).toEqual([]);
  });

  it("an entry that names no tool hermes knows, or an MCP server it does not configure, is a config error", () => {
    const file = join(dir, "hermes.yaml");
    expect(() => parseConfig("agent:\n  confirm: [shell, rm]\n", file)).toThrow(`${file}:2:20: agent.confirm.1: unknown tool 'rm'`);
    expect(() => parseConfig("agent:\n  confirm: [home__set_lights]\n", file)).toThrow(
      "agent.confirm.0: names MCP server 'home', which mcp.servers does not configure",
    );
  });
});
