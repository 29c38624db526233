/**
 * One tool of a server listed without an inputSchema, with a non-object one, or with an output schema that
 * cannot be compiled made the SDK refuse the whole list: the server was "not connected", retried forever,
 * and none of its tools (the well-formed ones too) could be used.
 */
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { startStdioSession } from "../helpers/mcp-session.js";

const SERVER = resolve(import.meta.dirname, "../fakes/mcp-odd-server.mjs");

describe("an MCP server's odd tool list", () => {
  const connect = (tools: unknown[]) => startStdioSession("odd", SERVER, { ODD_TOOLS: JSON.stringify(tools) });

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
