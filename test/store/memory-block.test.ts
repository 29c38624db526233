import { describe, expect, it } from "vitest";
import { estimateTokens } from "../../src/model/tokens.js";
import { type Memory, memoryBlock } from "../../src/store/memory.js";

const facts = (text: (i: number) => string): Memory[] =>
  Array.from({ length: 200 }, (_, i) => ({ id: i + 1, fact: text(i), created_at: i, owner: null, owner_name: null }));
const lines = (block: string) => block.split("\n").filter((l) => l.startsWith("- "));

describe("the memory block in the system prompt", () => {
  it("holds facts within its 2,000 characters of Latin text, and facts in Chinese within the same tokens", () => {
    const latin = memoryBlock(facts((i) => `the owner's fact number ${i} about the garden`));
    expect(lines(latin).join("\n").length).toBeLessThanOrEqual(2000);
    expect(lines(latin).length).toBeGreaterThan(30);
    const chinese = memoryBlock(facts((i) => `主人的第${i}条事实：花园里的番茄需要每天浇水`));
    // Counted as characters, 2,000 of them were ~2,500 tokens: four times the English block's.
    expect(estimateTokens(lines(chinese).join("\n"))).toBeLessThanOrEqual(Math.ceil(2000 / 3.6));
    expect(lines(chinese).length).toBeGreaterThan(10);
  });
});
