/**
 * A config reload (SIGHUP, and so `hermes pair`) made a new MCP hub and closed the old one: every server was
 * stopped and started again although its settings had not changed, and a call it was running was cut
 * ("Connection closed"), its action left half done.
 */
import { existsSync, readFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useHermes, useModel, useTempDir } from "../helpers/fixture.js";
import { baseSettings, writeConfig } from "../helpers/hermes.js";
import { waitFor } from "../helpers/wait.js";

const STDIO_SERVER = resolve(import.meta.dirname, "../fakes/mcp-stdio-server.mjs");

describe("a config reload and MCP servers", () => {
  it("keeps an unchanged server, its process and the call it is running; a changed one starts again", async () => {
    const dir = useTempDir();
    const model = await useModel();
    const lines = (f: string) => (existsSync(join(dir, f)) ? readFileSync(join(dir, f), "utf8").trim().split("\n") : []);
    const server = (pids: string) => ({
      command: process.execPath,
      args: [STDIO_SERVER],
      env: { MCP_LEDGER: join(dir, "ledger.txt"), MCP_PID_FILE: join(dir, pids) },
      confirm: "never",
      timeout_s: 30,
    });
    const settings = (homeArgs: string[] = []) => ({
      ...baseSettings(model.url),
      tools: { enabled: ["files__hang", "files__snapshot", "home__read_state"] },
      mcp: { servers: { files: server("files-pids.txt"), home: { ...server("home-pids.txt"), args: [STDIO_SERVER, ...homeArgs] } } },
    });
    const h = await useHermes(settings(), { dir });
    await h.cli(["tools"]);
    model.script({ toolCalls: [{ name: "files__hang", arguments: {} }] });
    const socket = createConnection(h.socketPath);
    socket.write(`${JSON.stringify({ v: 1, id: "1", op: "ask", session: "s", text: "wait" })}\n`);
    await waitFor(() => lines("ledger.txt").includes("hang started"), { everyMs: 25, message: "hang started" });

    // The home server's settings change (one more argument); the files server's do not.
    writeConfig(h.dir, settings(["--changed"]));
    h.process.kill("SIGHUP");
    await h.waitForLog((l) => l.msg === "config reloaded");
    model.script({ toolCalls: [{ name: "files__snapshot", arguments: {} }] }, { text: "snapshot taken" });
    expect((await h.ask("a snapshot, please", "--session", "t")).stdout).toBe("snapshot taken\n");
    model.script({ toolCalls: [{ name: "home__read_state", arguments: { entity: "light.hall" } }] }, { text: "the hall is lit" });
    expect((await h.ask("is the hall lit?", "--session", "u")).stdout).toBe("the hall is lit\n");

    expect(lines("files-pids.txt")).toHaveLength(1);
    expect(lines("home-pids.txt")).toHaveLength(2);
    expect(lines("ledger.txt")).not.toContain("hang cancelled");
    const audit = (await h.cli(["audit", "--json"])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { tool: string; status: string });
    expect(audit.find((a) => a.tool === "files__hang")?.status).toBe("running");
    socket.destroy();
  }, 30_000);
});
