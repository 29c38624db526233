// `npm run bench`: measures hermes against fake model and chat servers on 127.0.0.1, prints a table,
// writes bench/results/latest.json, and exits 1 if a figure misses its target.
// `npm run bench -- <part> …` runs only the named parts.
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import { createTempDir } from "../test/helpers/hermes.js";
import { emailCost } from "./email.js";
import { figures, meets, record } from "./figures.js";
import { setHere } from "./floors.js";
import { askRoundTripAndMemory } from "./memory.js";
import { prefill } from "./prefill.js";
import { promptSize } from "./prompt.js";
import { recallBench } from "./recall.js";
import { skillsPromptSize } from "./skills.js";
import { startToReady } from "./start.js";
import { stepOverhead } from "./steps.js";
import { throughput } from "./throughput.js";

/** The parts in the order they run, by the name `npm run bench -- <name>` takes. */
const PARTS: [string, () => Promise<void>][] = [
  ["step", stepOverhead],
  ["ask", askRoundTripAndMemory],
  ["ready", startToReady],
  ["prompt", promptSize],
  ["skills", skillsPromptSize],
  ["throughput", throughput],
  ["recall", recallBench],
  ["email", () => emailCost(record)],
  ["prefill", () => prefill(record)],
];

function writeResults(): void {
  const out = resolve(import.meta.dirname, "../../bench/results");
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, "latest.json"),
    `${JSON.stringify({ at: new Date().toISOString(), node: process.version, cpus: cpus().length, droppedForTimedStarts: setHere, figures }, null, 2)}\n`,
  );
}

async function main(): Promise<void> {
  console.log(`hermes benchmark on ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}`);
  if (setHere.length) console.log(`(${setHere.join(", ")} set here: dropped for the timed starts, as under systemd)`);
  console.log("");
  // The compile cache of every hermes started here, warmed by the first start of each kind (see start.ts).
  const cache = createTempDir();
  process.env.XDG_CACHE_HOME = cache.path;
  delete process.env.CACHE_DIRECTORY;
  const only = new Set(process.argv.slice(2));
  for (const [name, part] of PARTS) if (only.size === 0 || only.has(name)) await part();
  cache.cleanup();
  writeResults();
  const missed = figures.filter((f) => !meets(f));
  console.log(missed.length ? `\n${missed.length} target(s) missed: ${missed.map((f) => f.name).join("; ")}` : "\nall targets met");
  process.exit(missed.length ? 1 : 0);
}

void main();
