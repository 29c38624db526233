// `hermes ask` round trips and the daemon's memory: idle RSS after a burst of asks (plain, with every door
// open, with what an owner configures), then RSS over 15,000 turns.
import { Client } from "../src/cli/client.js";
import { startFakeModel } from "../test/fakes/model-server.js";
import { baseSettings, type Hermes, runCli, startHermes } from "../test/helpers/hermes.js";
import { httpEnv } from "../test/helpers/http.js";
import { record, recordRatio } from "./figures.js";
import { bareNodeMs, cleanEnv, Floor, setHere, timesAbove } from "./floors.js";
import { everyDoor, OWNER_SETUP, startOwnerSetup } from "./setups.js";
import { median, openFds, round, rssMb, timesOf } from "./stats.js";

const WARM_UP_TURNS = 5000;
/** `ask` ≤ this many bare nodes (spawned with their stdio piped, as the CLI is). */
const ASK_TARGET = 1.6;
const IDLE_RSS_TARGET_MB = 64;
const PIPED = "bare `node -e 0`, piped";

interface Idle {
  askMs: number;
  floorMs: number;
  rss: number;
  hermes: Hermes;
}

/** `hermes ask` p50 over 50 asks of a daemon with `settings` (each after a floor sample), then its RSS after 5 quiet seconds. */
async function askAndIdle(settings: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<Idle> {
  const hermes = await startHermes(settings, { env });
  // The CLI's output is piped (runCli), and so is its floor's.
  const floor = new Floor("piped");
  const times = await timesAbove(floor, 50, () =>
    runCli(["ask", "hello", "--config", hermes.configPath], { env: { ...cleanEnv, ...env } }),
  );
  await new Promise((r) => setTimeout(r, 5000));
  return { askMs: median(times), floorMs: floor.ms, rss: rssMb(hermes.process.pid as number), hermes };
}

async function askWithStartVars(hermes: Hermes): Promise<void> {
  if (!setHere.length) return;
  const times = await timesOf(50, () => runCli(["ask", "hello", "--config", hermes.configPath], { env: {} }));
  record({
    name: `  … ask with ${setHere.join(", ")} as set here, p50`,
    value: round(median(times), 1),
    unit: "ms",
    note: "Node reads it before any code runs",
    floor: `bare \`node -e 0\` with it ${await bareNodeMs({}, "piped")} ms`,
  });
}

export async function askRoundTripAndMemory(): Promise<void> {
  const model = await startFakeModel();
  model.respond(() => ({ text: "ok" }));
  const settings = { ...baseSettings(model.url), log: { level: "info" } };
  const base = await askAndIdle(settings);
  const door = await askAndIdle(everyDoor(settings, model.url), httpEnv);
  await door.hermes.stop();
  const owner = await startOwnerSetup();
  const owned = await askAndIdle(owner.apply(settings), owner.env);
  await owned.hermes.stop();
  await owner.close();
  recordRatio("`hermes ask` round trip p50, × bare node", base.askMs, base.floorMs, ASK_TARGET, PIPED);
  recordRatio("  … with MCP, speech and HTTP configured", door.askMs, door.floorMs, ASK_TARGET, PIPED);
  recordRatio(`  … with ${OWNER_SETUP}`, owned.askMs, owned.floorMs, ASK_TARGET, PIPED);
  await askWithStartVars(base.hermes);
  record({ name: "idle RSS after 5 s", value: base.rss, unit: "MB", target: { op: "<=", value: IDLE_RSS_TARGET_MB } });
  record({
    name: "  … with MCP, speech and HTTP: growth",
    value: round(door.rss - base.rss, 1),
    unit: "MB",
    target: { op: "<=", value: 12 },
    floor: `${door.rss} MB`,
  });
  record({
    name: `  … with ${OWNER_SETUP}`,
    value: owned.rss,
    unit: "MB",
    target: { op: "<=", value: IDLE_RSS_TARGET_MB },
    floor: `growth ${round(owned.rss - base.rss, 1)} MB`,
  });
  await turnsAndRss(base.hermes);
  await model.close();
}

/** RSS over 15,000 turns of 20 sessions on the socket: 5,000 to warm up, then sampled every 1,000. */
async function turnsAndRss(hermes: Hermes): Promise<void> {
  const pid = hermes.process.pid as number;
  const client = await Client.connect(hermes.socketPath);
  const turns = async (n: number) => {
    for (let i = 0; i < n; i++) await client.stream({ op: "ask", session: `s${i % 20}`, text: `turn ${i}` }, (r) => r.type === "done");
  };
  // Warm-up: V8 sizes its heap and SQLite fills its page cache over the first few thousand turns.
  // Then 10,000 turns more, sampled every 1,000, to show that RSS levels off.
  await turns(WARM_UP_TURNS);
  const warm = rssMb(pid);
  const fdsWarm = openFds(pid);
  const series: number[] = [];
  for (let k = 0; k < 10; k++) {
    await turns(1000);
    series.push(rssMb(pid));
  }
  const after = series.at(-1) ?? Number.NaN;
  const status = (await client.call({ op: "status" })) as { data?: { memory: { heap_used_mb: number; heap_total_mb: number } } };
  client.close();
  const span = `${WARM_UP_TURNS.toLocaleString("en")} → ${(WARM_UP_TURNS + 10_000).toLocaleString("en")} turns`;
  record({
    name: `RSS after ${(WARM_UP_TURNS + 10_000).toLocaleString("en")} turns`,
    value: after,
    unit: "MB",
    note: `every 1,000 after the warm-up: ${series.join(", ")}`,
  });
  record({
    name: "  … heap used / reserved",
    value: status.data?.memory.heap_used_mb ?? Number.NaN,
    unit: "MB",
    note: `of ${status.data?.memory.heap_total_mb} MB reserved`,
  });
  record({ name: `RSS growth ${span}`, value: round(after - warm, 1), unit: "MB", target: { op: "<=", value: 20 } });
  record({ name: `open fds growth ${span}`, value: openFds(pid) - fdsWarm, unit: "fds" });
  await hermes.stop();
}
