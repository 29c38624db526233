import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { markSnippet } from "../../src/store/recall.js";
import { openStore, type Store } from "../../src/store/store.js";
import { createTempDir } from "../helpers/hermes.js";

describe("recall in Korean", () => {
  let dir: ReturnType<typeof createTempDir>;
  let store: Store;
  afterEach(() => {
    store.close();
    dir.cleanup();
  });

  it("finds a one- or two-syllable Korean word with its particle attached, as it finds a three-syllable one", () => {
    dir = createTempDir();
    store = openStore(join(dir.path, "hermes.db"));
    const session = store.history.activeSession("cli:default");
    store.history.createRun("run-1", session.id, "cli", { input: "x", channel: "cli:default", sender: { id: "cli", name: "the owner" } });
    store.history.appendMessage(session.id, "run-1", { role: "user", content: "어제 회사에서 늦게 집에 갔어요" });
    const found = (query: string) => store.recall.search({ query, scope: { all: true } }).map((h) => markSnippet(h.snippet));
    expect(found("회사에서")).toHaveLength(1);
    // "company" and "home": Korean nouns are mostly one or two syllables and written with a particle after them.
    expect(found("회사")).toEqual(["어제 [회사에서] 늦게 집에 갔어요"]);
    expect(found("집")).toEqual(["어제 회사에서 늦게 [집에] 갔어요"]);
  });
});
