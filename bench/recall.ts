// The recall part of `npm run bench`: a search over 100,000 stored messages, and what the index adds to
// each message's write, against the agent's step overhead.
import { join } from "node:path";
import { scopeOf } from "../src/store/recall.js";
import { openStore, type Store } from "../src/store/store.js";
import { createTempDir } from "../test/helpers/hermes.js";
import { record } from "./figures.js";
import { percentile, round } from "./stats.js";
import { stepTimes } from "./steps.js";

const MESSAGES = 100_000;
const PEOPLE = ["telegram:1", "telegram:2", "discord:3", "cli"];

/** A repeatable pseudo-random stream (mulberry32), so every run searches the same corpus. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Words with a natural (Zipf-like) spread: a few very common, most rare; some accented, some Chinese. */
function vocabulary(random: () => number): string[] {
  const syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "po", "se", "vi", "dü", "ré", "an", "el", "or", "un"];
  const words = new Set<string>();
  while (words.size < 20_000) {
    const n = 1 + Math.floor(random() * 4);
    words.add(Array.from({ length: n }, () => syllables[Math.floor(random() * syllables.length)]).join(""));
  }
  const han = "水道屋月曜日北京房子天气明后电话号码医生预约";
  for (let i = 0; i < 500; i++) words.add(`${han[i % han.length]}${han[(i * 7) % han.length]}`);
  return [...words];
}

function sentence(words: string[], random: () => number): string {
  const n = 4 + Math.floor(random() * 30);
  return Array.from({ length: n }, () => words[Math.floor(words.length * random() ** 3)]).join(" ");
}

/** 100,000 messages in 2,000 sessions of four people, user and assistant turns and short tool results. */
function seed(store: Store, random: () => number): string[] {
  const words = vocabulary(random);
  const sessions = Array.from({ length: 2000 }, (_, i) => store.history.activeSession(`${PEOPLE[i % 4]}:${i}`));
  const fill = store.db.transaction((from: number) => {
    for (let i = from; i < Math.min(MESSAGES, from + 5000); i++) {
      const s = sessions[Math.floor(random() * sessions.length)] as (typeof sessions)[number];
      const runId = `r${Math.floor(i / 3)}`;
      if (i % 3 === 0) {
        const sender = PEOPLE[s.id % 4] as string;
        store.history.createRun(runId, s.id, "bench", { input: "", channel: s.key, sender: { id: sender, name: sender } });
      }
      const role = i % 3 === 1 ? "assistant" : "user";
      store.history.appendMessage(s.id, runId, { role, content: sentence(words, random) });
    }
  });
  for (let i = 0; i < MESSAGES; i += 5000) fill(i);
  return words;
}

/** p50 and p99 of searches for words from common to rare, one and two words, by the owner and by one person. */
function searchTimes(store: Store, words: string[], random: () => number): number[] {
  const times: number[] = [];
  for (let i = 0; i < 600; i++) {
    const word = () => words[Math.floor(words.length * random() ** 2)] as string;
    const query = i % 3 === 0 ? `${word()} ${word()}` : word();
    const scope = i % 2 === 0 ? scopeOf("cli") : scopeOf(PEOPLE[i % 3] as string);
    const t = performance.now();
    store.recall.search({ query, scope, limit: 10 });
    times.push(performance.now() - t);
  }
  return times.slice(100);
}

/**
 * What the index adds to storing one message: the same rows written with and without it, in turns. The p50 is
 * set against the step's p50; the mean also holds the index's merges, which land on a few writes.
 */
function indexWriteMs(store: Store, words: string[], random: () => number): { p50: number; mean: number } {
  const session = store.history.activeSession("cli:write-cost");
  const plain = store.db.prepare("INSERT INTO messages (session_id, role, content, created_at) VALUES (?, 'user', ?, ?)");
  const without = store.db.transaction((text: string) => plain.run(session.id, text, Date.now()));
  const costs: number[] = [];
  for (let i = 0; i < 4000; i++) {
    const text = sentence(words, random);
    let t = performance.now();
    without(text);
    const a = performance.now() - t;
    t = performance.now();
    store.history.appendMessage(session.id, null, { role: "user", content: text });
    costs.push(performance.now() - t - a);
  }
  const timed = costs.slice(500);
  return { p50: percentile(timed, 50), mean: timed.reduce((a, b) => a + b, 0) / timed.length };
}

export async function recallBench(): Promise<void> {
  const dir = createTempDir();
  const store = openStore(join(dir.path, "recall.db"));
  const random = seeded(40);
  const started = performance.now();
  const words = seed(store, random);
  const seedS = round((performance.now() - started) / 1000, 1);
  const times = searchTimes(store, words, random);
  const perMessage = indexWriteMs(store, words, random);
  store.close();
  dir.cleanup();
  const steps = await stepTimes();
  const step = percentile(steps.perStep, 50);
  record({
    name: `recall search over ${MESSAGES.toLocaleString("en")} messages p50`,
    value: round(percentile(times, 50), 2),
    unit: "ms",
    target: { op: "<=", value: 20 },
    floor: `p99 ${round(percentile(times, 99), 2)} ms; stored and indexed in ${seedS} s`,
  });
  const perStep = perMessage.p50 * steps.indexedPerStep;
  record({
    name: "  … index writes per step, share of the step overhead",
    value: round((100 * perStep) / step, 1),
    unit: "%",
    target: { op: "<=", value: 10 },
    floor: `${round(perMessage.p50 * 1000, 1)} µs a message (mean ${round(perMessage.mean * 1000, 1)}) × ${round(steps.indexedPerStep, 2)} indexed a step; step p50 ${round(step, 3)} ms`,
  });
}
