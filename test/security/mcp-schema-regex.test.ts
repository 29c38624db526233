/** An MCP server's schema with a catastrophic `pattern` cannot stall the daemon's thread on a model's argument. */
import { describe, expect, it } from "vitest";
import { compileValidator } from "../../src/mcp/schema.js";

describe("MCP schema patterns", () => {
  it("skips a pattern that backtracks exponentially, and still checks ordinary ones", () => {
    const check = compileValidator({
      type: "object",
      properties: { evil: { type: "string", pattern: "^(a+)+$" }, code: { type: "string", pattern: "^[A-Z]{3}$" } },
    });
    const started = performance.now();
    expect(check({ evil: `${"a".repeat(30)}!`, code: "ABC" })).toEqual([]);
    expect(performance.now() - started).toBeLessThan(200);
    expect(check({ evil: "a", code: "abc" })).toEqual(['code: must match pattern "^[A-Z]{3}$"']);
  });
});
