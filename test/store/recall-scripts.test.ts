/**
 * Recall in Korean and Japanese as people type them. A Korean word was searched as a prefix only from three
 * characters, a rule sized for Latin letters: "회사" (company) and "집" (home) did not find "회사에서" and "집에".
 * Full-width letters and digits and half-width katakana were indexed as they are, so "2024" did not find
 * "２０２４年"; the first fix folded them with NFKC, which also rewrote what a snippet quotes ("1½" as "11⁄2").
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { markSnippet } from "../../src/store/recall.js";
import { openStore, type Store } from "../../src/store/store.js";
import { createTempDir } from "../helpers/hermes.js";

describe("recall in the scripts people type", () => {
  let dir: ReturnType<typeof createTempDir>;
  let store: Store;
  /** Stores the owner's messages in one session. */
  const said = (...contents: string[]) => {
    const session = store.history.activeSession("cli:default");
    store.history.createRun("run-1", session.id, "cli", { input: "x", channel: "cli:default", sender: { id: "cli", name: "the owner" } });
    for (const content of contents) store.history.appendMessage(session.id, "run-1", { role: "user", content });
  };
  const found = (query: string) => store.recall.search({ query, scope: { all: true } }).map((h) => markSnippet(h.snippet));
  beforeEach(() => {
    dir = createTempDir();
    store = openStore(join(dir.path, "hermes.db"));
  });
  afterEach(() => {
    store.close();
    dir.cleanup();
  });

  it("finds a one- or two-syllable Korean word with its particle attached, as it finds a three-syllable one", () => {
    said("어제 회사에서 늦게 집에 갔어요");
    expect(found("회사에서")).toHaveLength(1);
    // "company" and "home": Korean nouns are mostly one or two syllables and written with a particle after them.
    expect(found("회사")).toEqual(["어제 [회사에서] 늦게 집에 갔어요"]);
    expect(found("집")).toEqual(["어제 회사에서 늦게 [집에] 갔어요"]);
  });

  it("finds full-width letters and digits and half-width katakana by what they are (a Japanese keyboard types them)", () => {
    said("２０２４年にｉＰｈｏｎｅを買った", "ｶﾀｶﾅで書きました ｶﾞｲﾄﾞ");
    expect(found("ｉＰｈｏｎｅ")).toHaveLength(1); // as typed: found
    expect(found("iPhone")).toHaveLength(1);
    expect(found("2024")).toHaveLength(1);
    expect(found("カタカナ")).toHaveLength(1);
    expect(found("ガイド")).toHaveLength(1);
  });

  it("quotes a message as it was written: superscripts, fractions and Korean chat letters are not rewritten", () => {
    said("the recipe takes 1½ cups of flour", "the flat is 45 m² and costs 2⁵ euros", "ㅋㅋㅋ 진짜 웃기다");
    expect(found("recipe")[0]).toContain("1½ cups");
    expect(found("flat")[0]).toContain("45 m² and costs 2⁵ euros");
    expect(found("진짜")[0]).toContain("ㅋㅋㅋ");
  });
});
