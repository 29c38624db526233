import { describe, expect, it } from "vitest";
import { charsForTokens, estimateTokens, latinLengthOf, truncateLatin } from "../../src/model/tokens.js";
import { truncateResult } from "../../src/text.js";

// Tokenizers of the models an owner runs (Llama 3, Qwen, Mistral, Gemma) give Chinese, Japanese and Korean
// 0.7–1.3 tokens a character, Cyrillic 2–4 characters a token, an emoji 1–3 tokens: the estimate may be
// high, never low, for each.
describe("the token estimate", () => {
  it("counts Latin text at 3.6 characters a token, as before", () => {
    expect(estimateTokens("x".repeat(360))).toBe(100);
    expect(estimateTokens(`Café Müller, ${"é".repeat(36)}`)).toBe(Math.ceil(49 / 3.6));
    expect(latinLengthOf("plain words")).toBe(11);
    expect(charsForTokens("plain words", 10)).toBe(36);
  });

  it("counts a Chinese, Japanese or Korean character as at least a token, an emoji as two, Cyrillic as half of one", () => {
    expect(estimateTokens("这是一个测试".repeat(100))).toBeGreaterThanOrEqual(600);
    expect(estimateTokens("ひらがなとカタカナ".repeat(10))).toBeGreaterThanOrEqual(90);
    expect(estimateTokens("한국어 문장입니다".repeat(10))).toBeGreaterThanOrEqual(80);
    expect(estimateTokens("😀".repeat(10))).toBe(20);
    expect(estimateTokens("Привет мир".repeat(10))).toBeGreaterThanOrEqual(45);
    // Mixed text: each part at its own rate.
    expect(estimateTokens(`${"x".repeat(36)}这是`)).toBe(Math.ceil(10 + 2.5));
  });

  it("gives a cut the characters of the text's own script that fit the tokens", () => {
    const chinese = "这是一个测试".repeat(100);
    const keep = charsForTokens(chinese, 100);
    expect(estimateTokens(chinese.slice(0, keep))).toBeLessThanOrEqual(100);
    expect(keep).toBeGreaterThanOrEqual(75);
    expect(charsForTokens(chinese, 0)).toBe(0);
  });

  it("counts what a binary file read as text is full of (U+FFFD), private use and the last Hangul jamo as a CJK character, not as Latin", () => {
    expect(estimateTokens("\ufffd".repeat(100))).toBeGreaterThanOrEqual(100);
    expect(estimateTokens("\ue000".repeat(100))).toBeGreaterThanOrEqual(100);
    expect(estimateTokens("\ud7b0".repeat(100))).toBeGreaterThanOrEqual(100);
    // Every character past U+036F but general punctuation counts half a token or more.
    const light: string[] = [];
    for (let c = 0x370; c <= 0xffff; c++) {
      if ((c >= 0x2000 && c < 0x2070) || (c >= 0xd800 && c < 0xe000)) continue;
      if (estimateTokens(String.fromCharCode(c).repeat(4)) < 2) light.push(c.toString(16));
    }
    expect(light).toEqual([]);
  });

  it("cuts a text of several scripts to what the Latin characters take, wherever its denser part is", () => {
    const han = "今天下午三点在咖啡馆和朋友见面。".repeat(200);
    const latin = "x".repeat(30000);
    for (const text of [han + latin, latin + han, han + latin + han, han]) {
      for (const max of [0, 20, 100, 600, 5000]) {
        const cut = truncateLatin(text, max);
        expect(latinLengthOf(cut)).toBeLessThanOrEqual(Math.max(max, latinLengthOf(truncateResult(text, 0))));
        expect(cut).toMatch(/characters cut/);
      }
    }
    // Latin text: as truncateResult cuts it.
    for (const max of [0, 20, 100, 600]) expect(truncateLatin(latin, max)).toBe(truncateResult(latin, max));
  });
});
