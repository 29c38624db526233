import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { markSnippet } from "../../src/store/recall.js";
import { openStore, type Store } from "../../src/store/store.js";
import { createTempDir } from "../helpers/hermes.js";

describe("recall in Japanese text", () => {
  let dir: ReturnType<typeof createTempDir>;
  let store: Store;
  afterEach(() => {
    store.close();
    dir.cleanup();
  });

  it("finds full-width letters and digits and half-width katakana by what they are (a Japanese keyboard types them)", () => {
    dir = createTempDir();
    store = openStore(join(dir.path, "hermes.db"));
    const session = store.history.activeSession("cli:default");
    store.history.createRun("run-1", session.id, "cli", { input: "x", channel: "cli:default", sender: { id: "cli", name: "the owner" } });
    store.history.appendMessage(session.id, "run-1", { role: "user", content: "２０２４年にｉＰｈｏｎｅを買った" });
    store.history.appendMessage(session.id, "run-1", { role: "assistant", content: "ｶﾀｶﾅで書きました" });
    const found = (query: string) => store.recall.search({ query, scope: { all: true } }).map((h) => markSnippet(h.snippet));
    expect(found("ｉＰｈｏｎｅ")).toHaveLength(1); // as typed: found
    expect(found("iPhone")).toHaveLength(1);
    expect(found("2024")).toHaveLength(1);
    expect(found("カタカナ")).toHaveLength(1);
  });
});
