import v8 from "node:v8";
import { afterEach, describe, expect, it } from "vitest";
import { startIdleTrim } from "../../src/daemon/idle-trim.js";
import { createLogger } from "../../src/log.js";
import { startFakeModel } from "../fakes/model-server.js";
import { baseSettings, startHermes } from "../helpers/hermes.js";
import { stoppedAfterEach } from "../helpers/per-test.js";
import { waitFor } from "../helpers/wait.js";

const log = createLogger("silent");
const newSpaceBytes = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.physical_space_size ?? 0;

/** Short-lived garbage, the way a burst of runs makes it: V8 grows its young generation to keep up. */
function burst(): void {
  let keep: object[] = [];
  for (let i = 0; i < 2_000_000; i++) {
    keep.push({ i, text: `message ${i}` });
    if (keep.length > 50_000) keep = [];
  }
}

/** Resolves once `trims` has its first entry. */
function firstTrim(trims: number[]): Promise<boolean> {
  return waitFor(() => trims.length > 0, { everyMs: 20, message: "no trim" });
}

describe("giving memory back when quiet", () => {
  let trim: { stop(): void } | undefined;
  afterEach(() => trim?.stop());

  it("shrinks the young generation once the loop is quiet, then waits for new growth", async () => {
    const trims: number[] = [];
    let first!: () => void;
    const trimmed = new Promise<void>((resolve) => {
      first = resolve;
    });
    trim = startIdleTrim({
      log,
      lookMs: 50,
      growthBytes: 1024 * 1024,
      onTrim: ({ ms }) => {
        trims.push(ms);
        first();
      },
    });
    burst();
    const grown = newSpaceBytes();
    await trimmed;
    expect(newSpaceBytes()).toBeLessThan(grown / 2);
    // Ten more quiet looks with nothing grown: no second collection.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(trims).toHaveLength(1);
  });

  it("waits at least minIntervalMs before the next trim, unless what grew meanwhile is large", async () => {
    const trims: number[] = [];
    const MB = 1024 * 1024;
    trim = startIdleTrim({
      log,
      lookMs: 50,
      growthBytes: 0,
      minIntervalMs: 60_000,
      largeGrowthBytes: 16 * MB,
      onTrim: ({ ms }) => trims.push(ms),
    });
    burst();
    await firstTrim(trims);
    // A small growth waits out the interval.
    const small = Array.from({ length: 4 }, () => Buffer.alloc(MB, 1));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(trims).toHaveLength(1);
    // A large one (a part loaded after the first trim) does not.
    const large = Array.from({ length: 24 }, () => Buffer.alloc(MB, 1));
    await waitFor(() => trims.length === 2, { everyMs: 20, message: "no second trim after a large growth" });
    expect(small.length + large.length).toBe(28);
  });

  it("does not collect while the loop is busy", async () => {
    burst();
    const trims: number[] = [];
    trim = startIdleTrim({ log, lookMs: 50, growthBytes: 0, onTrim: ({ ms }) => trims.push(ms) });
    const until = performance.now() + 600;
    // Busy 20 ms of every 25: twice the quiet threshold (1 % and a wake-up's 20 ms).
    while (performance.now() < until) {
      const end = performance.now() + 20;
      while (performance.now() < end) Math.sqrt(end);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(trims).toHaveLength(0);
    await firstTrim(trims);
    expect(trims).toHaveLength(1);
  });
});

describe("the daemon when quiet after runs", () => {
  const t = stoppedAfterEach();

  it("gives back what its start left behind at the first quiet moment, before any run", async () => {
    const model = await startFakeModel();
    t.model = model;
    const hermes = await startHermes({ ...baseSettings(model.url), log: { level: "debug" } });
    t.hermes = hermes;
    const line = await hermes.waitForLog((l) => l.msg === "idle: memory given back");
    expect(line.rssMb).toBeGreaterThan(0);
    expect(model.requests).toHaveLength(0);
  });

  it("gives memory back a few seconds after its last reply, and says so at debug level", async () => {
    const model = await startFakeModel();
    t.model = model;
    model.respond(() => ({ text: "ok" }));
    const hermes = await startHermes({ ...baseSettings(model.url), log: { level: "debug" } });
    t.hermes = hermes;
    for (let i = 0; i < 30; i++) expect((await hermes.ask(`hello ${i}`)).stdout.trim()).toBe("ok");
    const line = await hermes.waitForLog((l) => l.msg === "idle: memory given back");
    expect(line.rssMb).toBeGreaterThan(0);
  });
});
