/**
 * One tool of a server listed without an inputSchema, with a non-object one, or with an output schema that
 * cannot be compiled made the SDK refuse the whole list: the server was "not connected", retried forever,
 * and none of its tools (the well-formed ones too) could be used.
 */
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/log.js";
import { loadSdk } from "../../src/mcp/sdk.js";
import { createSession } from "../../src/mcp/session.js";
import type { McpSession } from "../../src/mcp/types.js";
import { useTempDir } from "../helpers/fixture.js";

const SERVER = resolve(import.meta.dirname, "../fakes/mcp-odd-server.mjs");

describe("an MCP server's odd tool list", () => {
  let session: McpSession | undefined;
  afterEach(async () => session?.close());

  const connect = async (tools: unknown[]) => {
    const dir = useTempDir();
    const yaml = `mcp:\n  servers:\n    odd:\n      command: ${process.execPath}\n      args: ["${SERVER}"]\ntools:\n  enabled: ["odd__*"]\n`;
    const cfg = parseConfig(yaml, join(dir, "hermes.yaml"), {}).config.mcp.servers.odd;
    if (!cfg) throw new Error("no server");
    session = createSession(
      "odd",
      { ...cfg, env: { ODD_TOOLS: JSON.stringify(tools) } },
      {
        sdk: loadSdk,
        log: createLogger("silent"),
        cached: [],
        onTools: () => {},
        retryBaseMs: 60_000,
      },
    );
    session.start();
    await session.firstAttempt();
    return session;
  };

  it("drops a tool without an inputSchema or with a non-object one, and keeps the server and its other tools", async () => {
    const s = await connect([
      { name: "good", inputSchema: { type: "object", properties: { q: { type: "string" } } } },
      { name: "no_schema" },
      { name: "string_schema", inputSchema: { type: "string" } },
      { name: "untyped", inputSchema: { properties: { n: { type: "number" } } } },
    ]);
    expect(s.status()).toMatchObject({ phase: "connected" });
    expect(s.tools().map((t) => t.name)).toEqual(["good", "no_schema", "untyped"]);
    expect(s.tools().find((t) => t.name === "no_schema")?.inputSchema).toEqual({ type: "object" });
    expect(s.tools().find((t) => t.name === "untyped")?.inputSchema).toMatchObject({ type: "object" });
    expect(await s.call("good", { q: "x" }, new AbortController().signal)).toMatchObject({ content: [{ text: "good ran" }] });
  });

  it("takes a tool whose output schema cannot be compiled, and calls it", async () => {
    const s = await connect([
      { name: "shaped", inputSchema: { type: "object" }, outputSchema: { type: "object", properties: { a: { type: "nonsense" } } } },
      { name: "plain", inputSchema: { type: "object" } },
    ]);
    expect(s.status()).toMatchObject({ phase: "connected" });
    expect(s.tools().map((t) => t.name)).toEqual(["shaped", "plain"]);
    expect(await s.call("shaped", {}, new AbortController().signal)).toMatchObject({ content: [{ text: "shaped ran" }] });
  });
});
