import { describe, expect, it } from "vitest";
import { shortHash } from "../src/gate/canonical.js";
import { randomBytes, secretBytes } from "../src/random.js";

describe("randomBytes", () => {
  it("gives as many bytes as asked, different every time, across refills of its pool", () => {
    // 8-byte ids: 1,000 of them draw the 4 KiB pool down twice.
    const ids = Array.from({ length: 1000 }, () => randomBytes(8).toString("hex"));
    expect(ids.every((id) => id.length === 16)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // Sizes that do not divide the pool: an id is never cut short at its end.
    for (const n of [1, 7, 12, 33, 4095, 4096]) expect(randomBytes(n).length).toBe(n);
  });

  it("gives a request larger than its pool straight from the kernel", () => {
    const big = randomBytes(10_000);
    expect(big.length).toBe(10_000);
    // Uniform bytes: every value turns up (a zero-filled or short read would not).
    expect(new Set(big).size).toBe(256);
  });

  it("hands out copies: an id stays as it was when the pool is drawn on and refilled", () => {
    const id = randomBytes(16);
    const copy = Buffer.from(id);
    for (let i = 0; i < 600; i++) randomBytes(8); // 4.8 KiB: past the pool's end, so it is refilled
    expect(id.equals(copy)).toBe(true);
    expect(id.some((b) => b !== 0)).toBe(true);
  });
});

describe("secretBytes", () => {
  it("gives unguessable bytes of the length asked", () => {
    const a = secretBytes(24);
    expect(a.length).toBe(24);
    expect(a.equals(secretBytes(24))).toBe(false);
  });
});

describe("shortHash", () => {
  it("is pinned: the same text gives the same 16 hex digits across restarts and releases", () => {
    // The repeat guard compares results of a run from before a restart with those after it.
    expect(shortHash("")).toBe("fac0f30888348e38");
    expect(shortHash("hello world")).toBe("6f2ced5f92fd5562");
    expect(shortHash('{"temp":21}')).toBe("a89c87e3a52d08f6");
    expect(shortHash("héllo ✓")).toBe("8b592288907dc3be");
  });

  it("tells texts apart that differ in one character, and 100,000 similar ones from each other", () => {
    expect(shortHash("result 1")).not.toBe(shortHash("result 2"));
    expect(shortHash("ab")).not.toBe(shortHash("ba"));
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) seen.add(shortHash(`{"temp":${i},"unit":"C"}`));
    expect(seen.size).toBe(100_000);
  });
});
