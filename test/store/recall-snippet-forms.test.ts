/**
 * Recall quotes a message as it was written: indexing in NFKC (to find full-width text by its letters) also
 * rewrote what a snippet shows ("1½" as "11⁄2", "m²" as "m2", Korean chat letters as conjoining jamo). Only
 * the full-width and half-width forms are folded now.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { markSnippet } from "../../src/store/recall.js";
import { openStore, type Store } from "../../src/store/store.js";
import { createTempDir } from "../helpers/hermes.js";

describe("recall snippets and the width of letters", () => {
  let dir: ReturnType<typeof createTempDir>;
  let store: Store;
  afterEach(() => {
    store.close();
    dir.cleanup();
  });

  it("quote a message as it was written: superscripts, fractions and Korean chat letters are not rewritten", () => {
    dir = createTempDir();
    store = openStore(join(dir.path, "hermes.db"));
    const session = store.history.activeSession("cli:default");
    store.history.createRun("run-1", session.id, "cli", { input: "x", channel: "cli:default", sender: { id: "cli", name: "the owner" } });
    store.history.appendMessage(session.id, "run-1", { role: "user", content: "the recipe takes 1½ cups of flour" });
    store.history.appendMessage(session.id, "run-1", { role: "user", content: "the flat is 45 m² and costs 2⁵ euros" });
    store.history.appendMessage(session.id, "run-1", { role: "user", content: "ㅋㅋㅋ 진짜 웃기다" });
    const snippet = (query: string) => store.recall.search({ query, scope: { all: true } }).map((h) => markSnippet(h.snippet))[0];
    expect(snippet("recipe")).toContain("1½ cups"); // was "11⁄2 cups": eleven halves
    expect(snippet("flat")).toContain("45 m² and costs 2⁵ euros"); // was "45 m2 and costs 25 euros"
    expect(snippet("진짜")).toContain("ㅋㅋㅋ");
  });

  it("still finds full-width text by its plain letters", () => {
    dir = createTempDir();
    store = openStore(join(dir.path, "hermes.db"));
    const session = store.history.activeSession("cli:default");
    store.history.createRun("run-1", session.id, "cli", { input: "x", channel: "cli:default", sender: { id: "cli", name: "the owner" } });
    store.history.appendMessage(session.id, "run-1", { role: "user", content: "２０２４年にｉＰｈｏｎｅを買った ｶﾞｲﾄﾞ" });
    const found = (query: string) => store.recall.search({ query, scope: { all: true } });
    expect(found("iPhone")).toHaveLength(1);
    expect(found("2024")).toHaveLength(1);
    expect(found("ガイド")).toHaveLength(1);
  });
});
