import { describe, expect, it } from "vitest";
import { summarize, truncateResult } from "../src/text.js";

/** A lone half of a surrogate pair: what a model server's JSON decoder turns into U+FFFD, or refuses. */
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe("cutting text", () => {
  it("never cuts an emoji (a character beyond U+FFFF) in half, at any length", () => {
    const text = "😀".repeat(400);
    for (let max = 30; max < 200; max++) {
      const cut = truncateResult(text, max);
      expect(cut, `max ${max}`).not.toMatch(LONE);
      expect(cut.length).toBeLessThanOrEqual(max);
      expect(summarize(text, max)).not.toMatch(LONE);
    }
  });

  it("cuts other text where it did: its head, the marker, its tail", () => {
    expect(truncateResult("a".repeat(100) + "z".repeat(100), 60)).toBe(`${"a".repeat(24)}\n[… 166 characters cut …]\n${"z".repeat(10)}`);
    expect(summarize("one  two\nthree", 6)).toBe("one t…");
  });
});
