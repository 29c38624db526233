import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { ConfigError } from "../../src/errors.js";
import { isEnabled, modelToolName, nameTools } from "../../src/mcp/names.js";
import { resultText } from "../../src/mcp/result.js";
import { compileValidator, trimDescription, trimSchema } from "../../src/mcp/schema.js";

function problemsOf(text: string) {
  try {
    parseConfig(text, "/etc/hermes/hermes.yaml", { HA_TOKEN: "secret-token-1234" });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.line}:${p.col} ${p.path}: ${p.message}`);
    throw err;
  }
  return [];
}

describe("MCP tool names", () => {
  it("are <server>__<tool>, sanitised to [A-Za-z0-9_-] and at most 64 characters", () => {
    expect(modelToolName("home", "light.turn_on")).toBe("home__light_turn_on");
    expect(modelToolName("fs", "read file/äöü")).toBe("fs__read_file____");
    expect(modelToolName("fs", "x".repeat(100))).toHaveLength(64);
  });

  it("are enabled exactly or by a * glob; built-in entries and other servers never match", () => {
    const enabled = ["clock", "home__*", "fs__read_*", "git__status"];
    expect(isEnabled("home__light_on", enabled)).toBe(true);
    expect(isEnabled("fs__read_file", enabled)).toBe(true);
    expect(isEnabled("fs__write_file", enabled)).toBe(false);
    expect(isEnabled("git__status", enabled)).toBe(true);
    expect(isEnabled("git__status2", enabled)).toBe(false);
    expect(isEnabled("homeassistant__x", enabled)).toBe(false);
    expect(isEnabled("clock", enabled)).toBe(false);
  });

  it("refuses tools whose names collide after sanitising, and keeps the others", () => {
    const { named, collisions } = nameTools("home", [{ name: "a.b" }, { name: "a_b" }, { name: "a b" }, { name: "c" }]);
    expect([...named.keys()]).toEqual(["home__c"]);
    expect(collisions).toEqual(["home__a_b"]);
  });
});

describe("MCP config", () => {
  it("accepts stdio and remote servers and enable entries that name them", () => {
    const { config, secrets } = parseConfig(
      [
        "mcp:",
        "  servers:",
        "    home: { url: http://ha.local:8123/api/mcp, headers: { Authorization: 'Bearer ${HA_TOKEN}' } }",
        "    fs: { command: npx, args: [-y, '@modelcontextprotocol/server-filesystem', /srv/share], confirm: never }",
        "tools:",
        "  enabled: [clock, 'home__*', fs__read_file]",
      ].join("\n"),
      "/etc/hermes/hermes.yaml",
      { HA_TOKEN: "secret-token-1234" },
    );
    expect(config.mcp.servers.home).toMatchObject({
      timeout_s: 30,
      confirm: "auto",
      headers: { Authorization: "Bearer secret-token-1234" },
    });
    expect(config.mcp.servers.fs).toMatchObject({ command: "npx", confirm: "never", env: {} });
    expect(secrets).toContain("secret-token-1234");
  });

  it("refuses unknown tools, globs over built-in names, unknown servers and half-configured servers, with line:col", () => {
    expect(problemsOf("tools:\n  enabled: [clokc]")).toEqual([expect.stringMatching(/^2:13 tools\.enabled\.0: unknown tool 'clokc'/)]);
    expect(problemsOf("tools:\n  enabled: ['*']")[0]).toMatch(/globs match MCP tools only/);
    expect(problemsOf("tools:\n  enabled: ['nas__*']")).toEqual([expect.stringMatching(/^2:13 tools\.enabled\.0: names MCP server 'nas'/)]);
    expect(problemsOf("mcp:\n  servers:\n    a: { command: x, url: http://h/ }")[0]).toMatch(
      /^3:8 mcp\.servers\.a: expected either command/,
    );
    expect(problemsOf("mcp:\n  servers:\n    my__nas: { command: x }")[0]).toMatch(/no '__'/);
    const job =
      "connectors:\n  cron:\n    jobs:\n      - { name: j, schedule: '0 3 * * *', prompt: p, deliver: 'cli:x', tools: ['nas__*'] }";
    expect(problemsOf(job)).toEqual([expect.stringMatching(/connectors\.cron\.jobs\.0\.tools\.0: names MCP server 'nas'/)]);
  });
});

describe("MCP schemas and results", () => {
  it("trims titles, examples and $schema but keeps a property called title, and collapses whitespace", () => {
    const trimmed = trimSchema({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      title: "Args",
      properties: { title: { type: "string", title: "Title", examples: ["x"], description: "the   page\n title" } },
      required: ["title"],
    });
    expect(trimmed).toEqual({
      type: "object",
      properties: { title: { type: "string", description: "the page title" } },
      required: ["title"],
    });
    expect(trimDescription(`${"A sentence. ".repeat(200)}`).length).toBeLessThanOrEqual(1026);
  });

  it("validates arguments against the server's JSON Schema and says what is wrong", () => {
    const validate = compileValidator({
      type: "object",
      properties: { level: { type: "integer", maximum: 100 }, mode: { enum: ["a", "b"] } },
      required: ["level"],
      additionalProperties: false,
    });
    expect(validate({ level: 50 })).toEqual([]);
    expect(validate({ level: 500, mode: "c", extra: 1 })).toEqual([
      "arguments: must NOT have additional properties ('extra')",
      "level: must be <= 100",
      'mode: must be equal to one of the allowed values: "a", "b"',
    ]);
    expect(compileValidator({ type: "nonsense" })({})[0]).toMatch(/cannot be checked/);
  });

  it("turns results into text: structured content once, placeholders for media, resource links", () => {
    expect(resultText({ content: [{ type: "text", text: '{"a":1}' }], structuredContent: { a: 1 } })).toBe('{"a":1}');
    expect(resultText({ content: [], structuredContent: { a: 1 } })).toBe('{"a":1}');
    expect(resultText({ content: [{ type: "audio", data: "AAAA", mimeType: "audio/ogg" }] })).toBe(
      "[audio (audio/ogg, 3 bytes): not shown to the model]",
    );
    expect(resultText({ content: [{ type: "resource", resource: { uri: "file:///a.txt", text: "inside" } }] })).toBe("inside");
    expect(resultText({ content: [] })).toBe("(the tool returned nothing)");
  });
});
