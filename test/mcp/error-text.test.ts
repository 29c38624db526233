/**
 * A server's JSON-RPC error whose words happen to say "closed" ("the garden valve is closed") or "fetch failed"
 * was taken for a lost connection: the server was stopped, its other calls cut, and the next ones answered
 * "not connected" until the retry came.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useTempDir } from "../helpers/fixture.js";
import { startStdioSession } from "../helpers/mcp-session.js";

const SERVER = resolve(import.meta.dirname, "../fakes/mcp-error-server.mjs");

describe("an MCP server's error text", () => {
  it("a JSON-RPC error saying 'the valve is closed' is the tool's failure; the connection stays", async () => {
    const dir = useTempDir();
    const pids = join(dir, "pids");
    const session = await startStdioSession("valves", SERVER, { PIDS: pids });
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
