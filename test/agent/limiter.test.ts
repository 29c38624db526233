import { describe, expect, it } from "vitest";
import { Limiter } from "../../src/agent/limiter.js";

/** A promise and its resolver: a step of a task the test lets happen. */
function step() {
  let go!: () => void;
  const done = new Promise<void>((resolve) => {
    go = resolve;
  });
  return { go, done };
}

describe("the model slot limiter", () => {
  it("starts the next task when a task releases its slot early, and a late second release frees nothing", async () => {
    const limiter = new Limiter(1);
    const log: string[] = [];
    const aAnswered = step();
    const aDone = step();
    const bDone = step();
    const a = limiter.run(async (release) => {
      log.push("a starts");
      await aAnswered.done;
      release();
      await aDone.done;
      log.push("a ends");
    });
    const bStarted = step();
    const b = limiter.run(async () => {
      log.push("b starts");
      bStarted.go();
      await bDone.done;
      log.push("b ends");
    });
    const c = limiter.run(async () => {
      log.push("c starts");
    });
    aAnswered.go();
    await bStarted.done;
    expect(log).toEqual(["a starts", "b starts"]);
    aDone.go();
    await a;
    // a's slot was already given to b: a ending must not let c run beside b.
    expect(log).toEqual(["a starts", "b starts", "a ends"]);
    expect(limiter.queued).toBe(1);
    bDone.go();
    await Promise.all([b, c]);
    expect(log).toEqual(["a starts", "b starts", "a ends", "b ends", "c starts"]);
  });

  it("starts the next task inside the release, before the releasing task goes on", async () => {
    const limiter = new Limiter(1);
    const log: string[] = [];
    const a = limiter.run(async (release) => {
      await Promise.resolve();
      release();
      log.push("a goes on");
    });
    const b = limiter.run(async () => {
      log.push("b starts");
    });
    await Promise.all([a, b]);
    expect(log).toEqual(["b starts", "a goes on"]);
  });

  it("frees the slot of a task that fails", async () => {
    const limiter = new Limiter(1);
    await expect(limiter.run(async () => Promise.reject(new Error("model down")))).rejects.toThrow("model down");
    expect(await limiter.run(async () => "next")).toBe("next");
  });
});
