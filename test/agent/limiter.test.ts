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
  it("lets a stopped task out of the line at once, whether it was stopped while waiting or before, and keeps the slot count", async () => {
    const limiter = new Limiter(1);
    const holder = step();
    const held = limiter.run(() => holder.done);
    const waiting = new AbortController();
    const log: string[] = [];
    const stoppedLater = limiter.run(async () => void log.push("stopped while waiting ran"), waiting.signal);
    const stoppedBefore = limiter.run(async () => void log.push("stopped before ran"), AbortSignal.abort());
    const next = limiter.run(async () => void log.push("next ran"));
    await stoppedBefore;
    expect(log).toEqual(["stopped before ran"]);
    expect(limiter.queued).toBe(2);
    waiting.abort();
    await stoppedLater;
    expect(log).toEqual(["stopped before ran", "stopped while waiting ran"]);
    expect(limiter.queued).toBe(1); // the next one still waits for the holder's slot: nobody freed it
    holder.go();
    await Promise.all([held, next]);
    expect(log.at(-1)).toBe("next ran");
    // The count is right afterwards: two tasks at a time are one too many for a limit of 1.
    const second = step();
    const one = limiter.run(() => second.done);
    let two = false;
    const other = limiter.run(async () => {
      two = true;
    });
    await Promise.resolve();
    expect(two).toBe(false);
    second.go();
    await Promise.all([one, other]);
    expect(two).toBe(true);
  });

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
