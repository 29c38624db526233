/**
 * An MCP entry of tools.enabled that names no tool of its server (a typo, a tool the server renamed) left the
 * model without that tool without a word: doctor said the server was fine, and nothing was logged. A server
 * the daemon was still starting was reported "not connected", a failure.
 */
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useHermes, useModel, useTempDir } from "../helpers/fixture.js";
import { baseSettings } from "../helpers/hermes.js";

const STDIO_SERVER = resolve(import.meta.dirname, "../fakes/mcp-stdio-server.mjs");

describe("MCP enable entries that name no tool", () => {
  it("are named by doctor (a warning, with the fix) and in the log", async () => {
    const dir = useTempDir();
    const model = await useModel();
    const h = await useHermes(
      {
        ...baseSettings(model.url),
        tools: { enabled: ["clock", "files__read_sate", "files__lights_dim", "files__x*"] },
        mcp: { servers: { files: { command: process.execPath, args: [STDIO_SERVER], env: { MCP_LEDGER: join(dir, "l.txt") } } } },
      },
      { dir },
    );
    await h.cli(["tools"]);
    const doctor = await h.cli(["doctor"]);
    expect(doctor.stdout).toMatch(
      /! mcp files +connected \(stdio\), 11 tools, 1 enabled, ~\d+ prompt tokens; tools\.enabled names no tool of it: files__read_sate, files__x\*/,
    );
    expect(doctor.stdout).toContain("`hermes tools` lists what files offers; fix or remove those entries");
    const warned = await h.waitForLog((l) => l.mcp === "files" && Array.isArray(l.entries));
    expect(warned.entries).toEqual(["files__read_sate", "files__x*"]);
    expect(String(warned.msg)).toMatch(/hermes\.yaml:\d+:\d+: entries that name no tool of server files/);
  });

  it("a server the daemon is still starting is a warning that says so, not a failure", async () => {
    const model = await useModel();
    const h = await useHermes({
      ...baseSettings(model.url),
      tools: { enabled: ["clock", "slow__*"] },
      mcp: { servers: { slow: { command: process.execPath, args: [STDIO_SERVER], env: { MCP_START_DELAY_MS: "60000" } } } },
    });
    const doctor = await h.cli(["doctor"]);
    expect(doctor.stdout).toMatch(/! mcp slow +still connecting \(stdio\): the daemon is starting it/);
    expect(doctor.stdout).not.toMatch(/mcp slow +not connected/);
  });
});
