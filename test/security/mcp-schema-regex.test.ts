/**
 * An MCP server's schema cannot stall the daemon's thread on a model's argument: its regular expressions are
 * the server's to check. One that backtracks exponentially (`^(a|a)*$` took 7.5 s on 27 characters, twice that
 * for each one more) got past a check of the pattern's shape.
 */
import { describe, expect, it } from "vitest";
import { compileValidator } from "../../src/mcp/schema.js";

describe("MCP schema patterns", () => {
  it("runs no server pattern, backtracking or not, and still checks the rest of the schema", () => {
    const check = compileValidator({
      type: "object",
      properties: {
        nested: { type: "string", pattern: "^(a+)+$" },
        alternated: { type: "string", pattern: "^(a|a)*$" },
        chained: { type: "string", pattern: "^\\d*\\d*\\d*\\d*\\d*x$" },
        pattern: { type: "integer" },
      },
      required: ["pattern"],
    });
    const started = performance.now();
    const evil = `${"a".repeat(26)}!`; // each further "a" doubles the time a backtracking pattern takes
    expect(check({ nested: evil, alternated: evil, chained: `${"1".repeat(3000)}!`, pattern: 1 })).toEqual([]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(check({ alternated: 5, pattern: "one" })).toEqual(["alternated: must be string", "pattern: must be integer"]);
  });

  it("an object with patternProperties takes keys its patterns would check, and checks its named ones", () => {
    const check = compileValidator({
      type: "object",
      properties: { room: { type: "string" } },
      patternProperties: { "^(x+)+$": { type: "number" } },
      additionalProperties: false,
    });
    expect(check({ room: "hall", xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_: "not a number" })).toEqual([]);
    expect(check({ room: 7 })).toEqual(["room: must be string"]);
  });

  it("keeps a `pattern` that is an argument's value, in const or enum", () => {
    const check = compileValidator({
      type: "object",
      properties: {
        filter: {
          enum: [
            { pattern: "*.log", recursive: true },
            { pattern: "*.txt", recursive: false },
          ],
        },
        fixed: { const: { pattern: "^a$" } },
      },
    });
    expect(check({ filter: { pattern: "*.log", recursive: true }, fixed: { pattern: "^a$" } })).toEqual([]);
    expect(check({ filter: { pattern: "*.md", recursive: true } })).toEqual([
      'filter: must be equal to one of the allowed values: {"pattern":"*.log","recursive":true}, {"pattern":"*.txt","recursive":false}',
    ]);
  });
});
