/** Tool call ids as hermes makes them: the one form every chat template takes back. */
import { describe, expect, it } from "vitest";
import { newCallId } from "../../src/model/call-id.js";

describe("newCallId", () => {
  it("makes nine letters and digits, different each time, with every character in use", () => {
    const ids = Array.from({ length: 2000 }, newCallId);
    for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // 18,000 characters over 62 letters and digits: each one turns up (a mapping that skipped some would not).
    expect(new Set(ids.join("")).size).toBe(62);
  });
});
