/**
 * Every reload starts the model's monitor again. While the model was down, each start added a round of probes
 * beside the one already waiting, and stop() ended only the latest: probes went on after the daemon stopped
 * watching, more of them with every reload.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createModelMonitor } from "../../src/daemon/health.js";
import { createLogger } from "../../src/log.js";
import type { ModelClient } from "../../src/model/types.js";

describe("the model's monitor", () => {
  afterEach(() => vi.useRealTimers());

  it("keeps one round of probes however often it is started, and none once stopped", async () => {
    vi.useFakeTimers();
    let probes = 0;
    const down = {
      probe: async () => {
        probes++;
        return { reachable: false, detail: "connection refused" };
      },
    } as unknown as ModelClient;
    const monitor = createModelMonitor(() => down, createLogger("silent"));
    for (let i = 0; i < 3; i++) {
      monitor.start();
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(probes).toBe(3);
    // One round: probes after 1 s, then 2 s and 4 s more (at 1, 3 and 7 s).
    await vi.advanceTimersByTimeAsync(7_000);
    expect(probes).toBe(6);
    monitor.stop();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(probes).toBe(6);
  });
});
