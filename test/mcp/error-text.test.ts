/**
 * A server's JSON-RPC error whose words happen to say "closed" ("the garden valve is closed") or "fetch failed"
 * was taken for a lost connection: the server was stopped, its other calls cut, and the next ones answered
 * "not connected" until the retry came.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/log.js";
import { loadSdk } from "../../src/mcp/sdk.js";
import { createSession } from "../../src/mcp/session.js";
import type { McpSession } from "../../src/mcp/types.js";
import { useTempDir } from "../helpers/fixture.js";

const SERVER = resolve(import.meta.dirname, "../fakes/mcp-error-server.mjs");

describe("an MCP server's error text", () => {
  let session: McpSession | undefined;
  afterEach(async () => session?.close());

  it("a JSON-RPC error saying 'the valve is closed' is the tool's failure; the connection stays", async () => {
    const dir = useTempDir();
    const pids = join(dir, "pids");
    const yaml = `mcp:\n  servers:\n    valves:\n      command: ${process.execPath}\n      args: ["${SERVER}"]\n      env: { PIDS: "${pids}" }\ntools:\n  enabled: ["valves__*"]\n`;
    const cfg = parseConfig(yaml, join(dir, "hermes.yaml"), {}).config.mcp.servers.valves;
    if (!cfg) throw new Error("no server");
    session = createSession("valves", cfg, {
      sdk: loadSdk,
      log: createLogger("silent"),
      cached: [],
      onTools: () => {},
      retryBaseMs: 60_000,
    });
    session.start();
    await session.firstAttempt();
    expect(session.status().phase).toBe("connected");
    const signal = new AbortController().signal;
    await expect(session.call("open_valve", {}, signal)).rejects.toThrow(/the garden valve is closed/);
    expect(session.status()).toMatchObject({ phase: "connected" });
    await expect(session.call("close_valve", {}, signal)).rejects.toThrow(/MCP error -32000: the valve is already closed/);
    expect(session.status()).toMatchObject({ phase: "connected" });
    expect(await session.call("status", {}, signal)).toMatchObject({ content: [{ type: "text", text: "all valves shut" }] });
    expect(readFileSync(pids, "utf8").trim().split("\n")).toHaveLength(1);
  });
});
