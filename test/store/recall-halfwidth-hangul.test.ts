/**
 * widthFolded folds each run of U+FF01–U+FFEE with NFKC. A half-width Hangul letter (U+FFA0–U+FFDC) is
 * two compatibility steps from a conjoining jamo (ﾻ → ㅋ → ᄏ), so NFKC makes it the conjoining jamo, not
 * the letter "ㅋ" a person types: the snippet quotes what d1a893b meant to stop, and a search for the
 * letter finds nothing. A half-width voiced mark after a full-width kana is folded alone (カﾞ stays カ + U+3099).
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { markSnippet } from "../../src/store/recall.js";
import { widthFolded } from "../../src/store/recall-text.js";
import { openStore, type Store } from "../../src/store/store.js";
import { createTempDir } from "../helpers/hermes.js";

describe("recall and half-width forms", () => {
  let dir: ReturnType<typeof createTempDir>;
  let store: Store;
  afterEach(() => {
    store?.close();
    dir?.cleanup();
  });

  it("folds half-width Hangul letters to the letters a keyboard types (ㅋ U+314B), not conjoining jamo", () => {
    expect(widthFolded("ﾻﾻﾻ")).toBe("ㅋㅋㅋ");
    dir = createTempDir();
    store = openStore(join(dir.path, "hermes.db"));
    const session = store.history.activeSession("cli:default");
    store.history.createRun("run-1", session.id, "cli", { input: "x", channel: "cli:default", sender: { id: "cli", name: "the owner" } });
    store.history.appendMessage(session.id, "run-1", { role: "user", content: "ﾻﾻﾻ 진짜 웃기다" });
    const hits = (query: string) => store.recall.search({ query, scope: { all: true } });
    expect(markSnippet(hits("진짜")[0]?.snippet ?? "")).toContain("ㅋㅋㅋ");
    expect(hits("ㅋㅋㅋ")).toHaveLength(1);
  });

  it("joins a half-width voiced mark to the full-width kana before it", () => {
    expect(widthFolded("カﾞイド")).toBe("ガイド");
  });
});
