import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { withSkill } from "../../src/skills/commands.js";
import type { Skill } from "../../src/skills/types.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { markSnippet, RecallStore, scopeOf } from "../../src/store/recall.js";
import { toFtsQuery } from "../../src/store/recall-text.js";
import { openStore, type Store } from "../../src/store/store.js";
import { createTempDir } from "../helpers/hermes.js";

const ALICE = "telegram:111";

/** A database as a version that had migrations up to `version` left it. */
function databaseAt(path: string, version: number): Database.Database {
  const db = new Database(path);
  db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
  for (const m of MIGRATIONS.filter((m) => m.version <= version)) {
    db.exec(m.sql);
    m.data?.(db);
    db.prepare("INSERT INTO schema_migrations VALUES (?, ?, ?)").run(m.version, m.name, Date.now());
  }
  return db;
}
const BOB = "telegram:222";

describe("recall", () => {
  const dirs: { cleanup: () => void }[] = [];
  const stores: Store[] = [];
  const tempDb = () => {
    const dir = createTempDir();
    dirs.push(dir);
    return join(dir.path, "hermes.db");
  };
  const open = (path = tempDb()) => {
    const store = openStore(path);
    stores.push(store);
    return store;
  };
  afterEach(() => {
    for (const s of stores.splice(0)) s.close();
    for (const d of dirs.splice(0)) d.cleanup();
  });

  /** One run in `key`'s open session: the person's message, then the given replies. */
  let runs = 0;
  function say(store: Store, key: string, sender: { id: string; name: string }, text: string, ...replies: string[]) {
    const session = store.history.activeSession(key);
    const runId = `run-${++runs}`;
    store.history.createRun(runId, session.id, sender.id.split(":")[0] ?? "cli", { input: text, channel: key, sender });
    store.history.appendMessage(session.id, runId, { role: "user", content: text });
    for (const reply of replies) store.history.appendMessage(session.id, runId, { role: "assistant", content: reply });
    return session;
  }
  const owner = { id: "cli", name: "the owner" };
  const all = { all: true } as const;

  it("indexes a /<skill> message by the person's words, not the skill's instructions, also one stored before", () => {
    const skill = { name: "plan-trip", body: "Compare the trains and the coaches; give times and prices." } as Skill;
    const path = tempDb();
    const store = open(path);
    say(store, ALICE, { id: ALICE, name: "Alice" }, withSkill(skill, "to Lisbon in May"));
    // In a group the runner puts the sender's name in front.
    say(store, "telegram:-100", { id: ALICE, name: "Alice" }, `Alice: ${withSkill(skill, "to Porto in June")}`);
    say(store, ALICE, { id: ALICE, name: "Alice" }, 'How do I Use the skill "plan-trip"? For Lisbon.');
    const found = (query: string) => store.recall.search({ query, scope: all }).map((h) => markSnippet(h.snippet));
    const words = ['How do I Use the skill "plan-trip"? For [Lisbon].', "to [Porto] in June", "to [Lisbon] in May"];
    expect(found("coaches")).toEqual([]);
    expect(found("lisbon")).toEqual([words[0], words[2]]);
    expect(found("porto")).toEqual([words[1]]);

    // As the index of an earlier version held them: the instructions indexed with the words.
    const rows = store.db.prepare("SELECT id, content FROM messages WHERE content LIKE '%<skill %'").all() as {
      id: number;
      content: string;
    }[];
    expect(rows).toHaveLength(2);
    for (const { id, content } of rows) {
      const now = store.db.prepare("SELECT text FROM recall_source WHERE id = ?").pluck().get(id);
      store.db.prepare("INSERT INTO recall_index (recall_index, rowid, text) VALUES ('delete', ?, ?)").run(id, now);
      store.db.prepare("INSERT INTO recall_index (rowid, text) VALUES (?, ?)").run(id, content);
    }
    store.db.prepare("DELETE FROM schema_migrations WHERE version = 19").run();
    stores.splice(stores.indexOf(store), 1);
    store.close();
    const upgraded = open(path);
    const again = (query: string) => upgraded.recall.search({ query, scope: all }).map((h) => markSnippet(h.snippet));
    expect(again("coaches")).toEqual([]);
    expect(again("lisbon")).toEqual([words[0], words[2]]);
    expect(again("porto")).toEqual([words[1]]);
    // The index agrees with the text it reads snippets from (FTS5 checks every row, and throws if not).
    const check = upgraded.db.prepare("INSERT INTO recall_index (recall_index, rank) VALUES ('integrity-check', 1)");
    expect(() => check.run()).not.toThrow();
  });

  it("opens a database from before migration 17 that holds /<skill> messages, and indexes their words alone", () => {
    const path = tempDb();
    const old = databaseAt(path, 16);
    const skill = { name: "plan-trip", body: "Compare the trains and the coaches; give times and prices." } as Skill;
    old.prepare("INSERT INTO sessions (id, key, created_at) VALUES (1, 'telegram:-100', ?)").run(Date.now());
    const insert = old.prepare("INSERT INTO messages (session_id, role, content, created_at) VALUES (1, 'user', ?, ?)");
    for (const content of [withSkill(skill, "to Lisbon in May"), `Alice: ${withSkill(skill, "to Porto in June")}`]) {
      const { lastInsertRowid } = insert.run(content, Date.now());
      old.prepare("INSERT INTO recall_index (rowid, text) VALUES (?, ?)").run(lastInsertRowid, content); // 16's index kept a copy
    }
    old.close();
    const store = open(path);
    const found = (query: string) => store.recall.search({ query, scope: all }).map((h) => markSnippet(h.snippet));
    expect(found("coaches")).toEqual([]);
    expect(found("lisbon")).toEqual(["to [Lisbon] in May"]);
    expect(found("porto")).toEqual(["Alice: to [Porto] in June"]);
    const check = store.db.prepare("INSERT INTO recall_index (recall_index, rank) VALUES ('integrity-check', 1)");
    expect(() => check.run()).not.toThrow();
  });

  it("keeps a word's vowel signs in it (Hindi, Tamil): a word is found, not others that share its letters, also after migration 20", () => {
    const path = tempDb();
    const old = databaseAt(path, 19);
    old.prepare("INSERT INTO sessions (id, key, created_at) VALUES (1, 'telegram:111', ?)").run(Date.now());
    const insert = old.prepare("INSERT INTO messages (session_id, role, content, created_at) VALUES (1, 'user', ?, ?)");
    // I have work tomorrow; Ram's house is big; I will come tomorrow; rain all day.
    for (const content of ["मुझे कल काम है", "राम का मकान बड़ा है", "நான் நாளை வருவேன்", "நாள் முழுவதும் மழை"]) {
      const { lastInsertRowid } = insert.run(content, Date.now());
      old.prepare("INSERT INTO recall_index (rowid, text) VALUES (?, ?)").run(lastInsertRowid, content);
    }
    old.close();
    const store = open(path);
    const found = (query: string) => store.recall.search({ query, scope: all }).map((h) => markSnippet(h.snippet, "", ""));
    expect(found("काम")).toEqual(["मुझे कल काम है"]); // "work", not "का मकान" ("of the house")
    expect(found("நாளை")).toEqual(["நான் நாளை வருவேன்"]); // "tomorrow", not "நாள்" ("day")
    // Latin accents still fold, written as one character or as a letter and a combining accent.
    say(store, "cli:default", owner, "Café Müller in Ma\u0301laga");
    expect(found("cafe muller")).toHaveLength(1);
    expect(found("malaga")).toHaveLength(1);
  });

  it("finds a message by its words, newest first, with its session, time, speaker and a snippet around the match", () => {
    const store = open();
    const before = Date.now();
    say(store, "cli:default", owner, "The plumber comes on Tuesday to fix the kitchen sink", "Noted: the plumber, Tuesday.");
    say(store, "cli:garden", owner, "Buy seeds for the garden");
    const later = say(store, "cli:default", owner, "Cancel the plumber, the sink works again");
    const hits = store.recall.search({ query: "plumber", scope: all });
    expect(hits.map((h) => markSnippet(h.snippet, "", ""))).toEqual([
      "Cancel the plumber, the sink works again",
      "Noted: the plumber, Tuesday.",
      "The plumber comes on Tuesday to fix the kitchen sink",
    ]);
    expect(hits[0]).toMatchObject({ session_key: "cli:default", session_id: later.id, role: "user", speaker: "the owner" });
    expect(hits[0]?.created_at).toBeGreaterThanOrEqual(before);
    expect(hits[1]).toMatchObject({ role: "assistant", speaker: "hermes" });
    expect(markSnippet(hits[0]?.snippet ?? "")).toBe("Cancel the [plumber], the sink works again");
    // A longer message is cut around the match.
    say(store, "cli:default", owner, `${"word ".repeat(60)}the electrician arrives at noon ${"more ".repeat(60)}`);
    const [cut] = store.recall.search({ query: "electrician", scope: all });
    expect(markSnippet(cut?.snippet ?? "")).toMatch(/^….*the \[electrician\] arrives at noon.*…$/);
    expect(cut?.snippet.length).toBeLessThan(200);
    // Every word must match; the last matches as a prefix; a session key and a limit narrow the search.
    expect(store.recall.search({ query: "plumber tuesday", scope: all })).toHaveLength(2);
    expect(store.recall.search({ query: "plumb", scope: all })).toHaveLength(3);
    expect(store.recall.search({ query: "plumber", scope: all, session: "cli:garden" })).toEqual([]);
    expect(store.recall.search({ query: "seeds", scope: all, session: "cli:garden" })).toHaveLength(1);
    expect(store.recall.search({ query: "plumber", scope: all, limit: 1 })).toHaveLength(1);
  });

  it("folds accents and case, and finds Chinese, Japanese, Korean and Cyrillic words, one or two characters long too", () => {
    const store = open();
    const texts = [
      "Rendez-vous au Café Müller à Genève",
      "水道屋さんは月曜日に来ます",
      "明天去北京看房子",
      "배관공이 월요일에 와요",
      "Сантехник придёт в понедельник",
    ];
    for (const text of texts) say(store, "cli:default", owner, text);
    const found = (query: string) => store.recall.search({ query, scope: all }).map((h) => markSnippet(h.snippet));
    expect(found("cafe muller geneve")).toEqual(["Rendez-vous au [Café] [Müller] à [Genève]"]);
    expect(found("CAFÉ")).toHaveLength(1);
    expect(found("月曜")).toEqual(["水道屋さんは[月曜]日に来ます"]);
    expect(found("水道屋")).toHaveLength(1);
    expect(found("北京")).toEqual(["明天去[北京]看房子"]);
    expect(found("京北")).toEqual([]);
    expect(found("房")).toHaveLength(1);
    expect(found("월요일")).toEqual(["배관공이 [월요일에] 와요"]);
    expect(found("сантехник")).toHaveLength(1);
    expect(found("понедельник")).toHaveLength(1);
  });

  it("turns any text into a query without an error: operators, quotes and brackets are only words or nothing", () => {
    const store = open();
    say(store, "cli:default", owner, "near the door or not, and the star");
    for (const query of [
      '"',
      "*",
      "(",
      "NEAR(a b)",
      "plumb* OR",
      "-x",
      "col:door",
      "AND",
      "^",
      "'; DROP TABLE messages; --",
      "",
      "   ",
      "…",
    ])
      expect(() => store.recall.search({ query, scope: all })).not.toThrow();
    expect(store.recall.search({ query: "NOT", scope: all })).toHaveLength(1);
    expect(store.recall.search({ query: '"door" OR', scope: all })).toHaveLength(1);
    expect(store.recall.search({ query: "***", scope: all })).toEqual([]);
  });

  it("finds nothing for a query of accents alone, which the index folds away: not every message", () => {
    const store = open();
    say(store, "cli:default", owner, "the plumber comes on Tuesday", "Noted: Tuesday.");
    say(store, "cli:default", owner, "Café Müller at noon");
    // Combining accents (U+0301, U+0308) are marks, not letters: unicode61 removes them, leaving an empty word.
    for (const query of ["\u0301\u0301\u0301", "\u0308\u0301\u0301\u0301", "\u0301\u0301\u0301 \u0308\u0308\u0308"])
      expect(store.recall.search({ query, scope: all })).toEqual([]);
    expect(toFtsQuery("\u0301\u0301\u0301")).toBeUndefined();
    // An accent with letters is still part of its word, and a prefix needs three letters, not three characters.
    expect(store.recall.search({ query: "cafe\u0301", scope: all }).map((h) => markSnippet(h.snippet))).toEqual(["[Café] Müller at noon"]);
    expect(toFtsQuery("tu\u0301")).toBe('"tu\u0301"');
  });

  it("searches a query's first 16 words: a pasted paragraph or 500 words of a-a-a from a model is cut, not walked word by word", () => {
    const store = open();
    const sixteen = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen";
    say(store, "cli:default", owner, `${sixteen} and more`);
    // 999 characters in one phrase of 500 words; a query that repeats a word counts it once.
    expect(toFtsQuery(`${"a-".repeat(499)}a`)).toBe(`"${Array(16).fill("a").join(" ")}"`);
    expect(toFtsQuery("plumber plumber plumber door")).toBe('"plumber"* "door"*');
    const words = (q: string) => toFtsQuery(q)?.match(/[\p{L}\p{N}]+/gu)?.length;
    expect(words(Array.from({ length: 200 }, (_, i) => `word${i}`).join(" "))).toBe(16);
    // What the first 16 words find is found: the words after them are not searched.
    expect(store.recall.search({ query: `${sixteen} nowhere absent`, scope: all })).toHaveLength(1);
    expect(store.recall.search({ query: `${sixteen.split(" ").slice(1).join(" ")} nowhere`, scope: all })).toEqual([]);
  });

  it("indexes short tool results but not long ones, nor recall's own results, nor the time note of a message", () => {
    const store = open();
    const session = say(store, "cli:default", owner, "what is the weather");
    const tool = (toolName: string, content: string) =>
      store.history.appendMessage(session.id, null, { role: "tool", content, toolCallId: "c", toolName });
    tool("weather", "Hamburg: drizzle, 7 °C");
    tool("http_get", `drizzle ${"x ".repeat(1000)}`);
    tool("recall", '2026-12-01 cli:default, the owner: "drizzle"');
    const hits = store.recall.search({ query: "drizzle", scope: all });
    expect(hits.map((h) => h.speaker)).toEqual(["weather result"]);
    // The time hermes appends to each user message is not something anyone said.
    say(store, "cli:default", owner, "see you soon\n\n(Current time: Wednesday 2 December 2026, 06:27 UTC+01:00 (Europe/Berlin))");
    expect(store.recall.search({ query: "december", scope: all })).toEqual([]);
    expect(store.recall.search({ query: "soon", scope: all }).map((h) => markSnippet(h.snippet))).toEqual(["see you [soon]"]);
  });

  it("a group hit does not say its speaker's name twice, also when the name is what was searched for", () => {
    const store = open();
    const bob = { id: BOB, name: "Bob Stone" };
    say(store, "telegram:-500", bob, "Bob Stone: the boat leaves at nine");
    say(store, ALICE, { id: ALICE, name: "Alice" }, "Bob Stone: ask him about the boat");
    const hits = (query: string) => store.recall.search({ query, scope: all }).map((h) => `${h.speaker}: ${markSnippet(h.snippet)}`);
    expect(hits("boat")).toEqual(["Alice: Bob Stone: ask him about the [boat]", "Bob Stone: the [boat] leaves at nine"]);
    expect(hits("stone leaves")).toEqual(["Bob Stone: the boat [leaves] at nine"]);
  });

  it("shows a person their own chats and the group chats they write in, never another person's; the owner sees all", () => {
    const store = open();
    const alice = { id: ALICE, name: "Alice" };
    const bob = { id: BOB, name: "Bob" };
    say(store, "telegram:111", alice, "my dentist appointment is on Friday");
    say(store, "telegram:222", bob, "my dentist said I need a crown");
    say(store, "telegram:-500", bob, "family dinner: who books the dentist for the kids?");
    say(store, "telegram:-500", alice, "I will");
    say(store, "telegram:-600", bob, "Bob's other group: dentist bill");
    say(store, "cli:default", owner, "the dentist invoice is in the drawer");
    // After /new the older session of the same chat is still that person's chat.
    store.history.newSession("telegram:111");
    say(store, "telegram:111", alice, "dentist moved to Monday");

    const keys = (sender: string) =>
      store.recall.search({ query: "dentist", scope: scopeOf(sender), limit: 50 }).map((h) => `${h.session_key} ${h.speaker}`);
    expect(keys(ALICE)).toEqual(["telegram:111 Alice", "telegram:-500 Bob", "telegram:111 Alice"]);
    expect(keys(BOB)).toEqual(["telegram:-600 Bob", "telegram:-500 Bob", "telegram:222 Bob"]);
    expect(keys("cli")).toHaveLength(6);
    expect(keys("cron")).toHaveLength(6);
    expect(keys("telegram:999")).toEqual([]);
    expect(keys("hook")).toEqual([]);
    // A session key asked for does not widen the scope.
    expect(store.recall.search({ query: "dentist", scope: scopeOf(ALICE), session: "telegram:222" })).toEqual([]);
  });

  it("builds the index for a database written before it existed (migration 14), old messages in every script included", () => {
    const path = tempDb();
    const old = databaseAt(path, 13);
    const at = Date.parse("2026-06-01T10:00:00Z");
    old.prepare("INSERT INTO sessions (id, key, created_at) VALUES (1, 'telegram:111', ?), (2, 'telegram:222', ?)").run(at, at);
    old
      .prepare(
        "INSERT INTO runs (id, session_id, source, status, started_at, sender_id, sender_name) VALUES (?, ?, 'telegram', 'done', ?, ?, ?)",
      )
      .run("r1", 1, at, ALICE, "Alice");
    old
      .prepare(
        "INSERT INTO runs (id, session_id, source, status, started_at, sender_id, sender_name) VALUES (?, ?, 'telegram', 'done', ?, ?, ?)",
      )
      .run("r2", 2, at, BOB, "Bob");
    const insert = old.prepare("INSERT INTO messages (session_id, run_id, role, content, created_at) VALUES (?, ?, ?, ?, ?)");
    insert.run(1, "r1", "user", "the plumber's number is 0151 234", at);
    insert.run(1, "r1", "assistant", "", at);
    insert.run(1, "r1", "assistant", "Saved the plumber's number.", at + 1000);
    insert.run(2, "r2", "user", "水道屋の電話番号", at + 2000);
    old.close();

    const store = open(path);
    expect(store.db.prepare("SELECT MAX(version) FROM schema_migrations").pluck().get()).toBe(MIGRATIONS.at(-1)?.version);
    const hits = store.recall.search({ query: "plumber", scope: scopeOf(ALICE) });
    expect(hits.map((h) => [h.session_key, h.speaker, h.created_at])).toEqual([
      ["telegram:111", "hermes", at + 1000],
      ["telegram:111", "Alice", at],
    ]);
    expect(store.recall.search({ query: "水道", scope: scopeOf(ALICE) })).toEqual([]);
    expect(store.recall.search({ query: "水道", scope: scopeOf(BOB) }).map((h) => markSnippet(h.snippet))).toEqual(["[水道]屋の電話番号"]);
    // Messages stored from now on join the same index.
    store.history.appendMessage(1, null, { role: "user", content: "plumber again" });
    expect(store.recall.search({ query: "plumber", scope: all })).toHaveLength(3);
  });

  it("keeps finding every message after migration 16 sets the index's smaller leaves, on new and older databases", () => {
    const pgsz = (s: Store) => s.db.prepare("SELECT v FROM recall_index_config WHERE k = 'pgsz'").pluck().get();
    expect(pgsz(open())).toBe(1000);

    const path = tempDb();
    const old = databaseAt(path, 15);
    old.prepare("INSERT INTO sessions (id, key, created_at) VALUES (1, 'cli:default', ?)").run(Date.now());
    const insert = old.prepare("INSERT INTO messages (id, session_id, role, content, created_at) VALUES (?, 1, 'user', ?, ?)");
    const index = old.prepare("INSERT INTO recall_index (rowid, text) VALUES (?, ?)");
    old.transaction(() => {
      // Enough words that the old index holds full 4,050-byte leaves.
      for (let i = 1; i <= 400; i++) {
        const text = `the plumber came on day ${i} with k${i}q and tool${i % 7}`;
        insert.run(i, text, Date.now());
        index.run(i, text);
      }
    })();
    expect(old.prepare("SELECT v FROM recall_index_config WHERE k = 'pgsz'").pluck().get()).toBeUndefined();
    old.close();

    const store = open(path);
    expect(pgsz(store)).toBe(1000);
    for (let i = 401; i <= 420; i++)
      store.history.appendMessage(1, null, { role: "user", content: `the plumber came on day ${i} with k${i}q` });
    expect(store.recall.search({ query: "plumber", scope: all, limit: 50 })).toHaveLength(50);
    expect(store.recall.search({ query: "k17q", scope: all }).map((h) => markSnippet(h.snippet))).toEqual([
      "the plumber came on day 17 with [k17q] and tool3",
    ]);
    expect(store.recall.search({ query: "k410q", scope: all }).map((h) => markSnippet(h.snippet))).toEqual([
      "the plumber came on day 410 with [k410q]",
    ]);
    // The old and new segments merge into one index that still finds every message.
    store.db.exec("INSERT INTO recall_index (recall_index) VALUES ('optimize')");
    expect(store.db.prepare("SELECT COUNT(*) FROM recall_index WHERE recall_index MATCH 'plumber'").pluck().get()).toBe(420);
    expect(store.recall.search({ query: "k17q", scope: all }).map((h) => h.message_id)).toEqual([17]);
  });

  it("keeps each message's text once: the index reads it from the messages, also from a read-only connection", () => {
    const path = tempDb();
    const old = databaseAt(path, 16);
    old.prepare("INSERT INTO sessions (id, key, created_at) VALUES (1, 'cli:default', ?)").run(Date.now());
    old
      .prepare("INSERT INTO messages (id, session_id, role, content, created_at) VALUES (1, 1, 'user', ?, ?)")
      .run("the plumber on Tuesday", Date.now());
    old.prepare("INSERT INTO recall_index (rowid, text) VALUES (1, ?)").run("the plumber on Tuesday");
    // The old index kept its own copy of every text.
    expect(old.prepare("SELECT COUNT(*) FROM recall_index_content").pluck().get()).toBe(1);
    old.close();

    const store = open(path);
    expect(store.db.prepare("SELECT name FROM sqlite_master WHERE name = 'recall_index_content'").get()).toBeUndefined();
    const session = store.history.activeSession("cli:default");
    store.history.appendMessage(session.id, null, { role: "user", content: "the roofer on Friday\n\n(Current time: Friday 14:00)" });
    store.history.appendMessage(session.id, null, { role: "assistant", content: "水道屋に電話した" });
    const snippets = (s: RecallStore, query: string) => s.search({ query, scope: all }).map((h) => markSnippet(h.snippet));
    expect(snippets(store.recall, "plumber")).toEqual(["the [plumber] on Tuesday"]);
    // The time note the runner appends is neither found nor shown.
    expect(snippets(store.recall, "roofer")).toEqual(["the [roofer] on Friday"]);
    expect(snippets(store.recall, "current")).toEqual([]);
    expect(snippets(store.recall, "水道")).toEqual(["[水道]屋に電話した"]);
    // As `hermes search` reads it: its own connection, read-only.
    const reader = new Database(path, { readonly: true });
    try {
      expect(snippets(new RecallStore(reader), "roofer")).toEqual(["the [roofer] on Friday"]);
    } finally {
      reader.close();
    }
  });
});
