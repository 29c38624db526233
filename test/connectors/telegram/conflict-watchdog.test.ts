/**
 * Another program polling the same bot (409 Conflict) made the connector unhealthy in the way a deaf poller
 * is, so the watchdog pings stopped and systemd restarted the whole daemon again and again: a restart cannot
 * stop the other program. The poller keeps trying and says so; the pings go on.
 */
import { GrammyError } from "grammy";
import { describe, expect, it } from "vitest";
import { createPoller } from "../../../connectors/telegram/polling.js";
import { createLogger } from "../../../src/log.js";
import { openStore } from "../../../src/store/store.js";
import { createTempDir } from "../../helpers/hermes.js";
import { waitFor } from "../../helpers/wait.js";

describe("a second poller on the same bot (409)", () => {
  it("is reported as the owner's to fix, not as a stuck poller that a restart would cure", async () => {
    const dir = createTempDir();
    const store = openStore(`${dir.path}/hermes.db`);
    const stop = new AbortController();
    try {
      const getUpdates = () =>
        Promise.reject(
          new GrammyError(
            "Call to 'getUpdates' failed!",
            { ok: false, error_code: 409, description: "Conflict: terminated by other getUpdates request" },
            "getUpdates",
            {},
          ),
        );
      const poller = createPoller({ api: { getUpdates } as never, store: store.inbound, log: createLogger("silent"), pollTimeoutS: 1 });
      void poller.supplier.supply(10, stop.signal as never);
      await waitFor(() => !poller.health().ok, { message: "the conflict to be seen" });
      const health = poller.health();
      expect(health).toMatchObject({ ok: false, needsOwner: true });
      expect(health.detail).toMatch(/409/);
    } finally {
      stop.abort();
      store.close();
      dir.cleanup();
    }
  });
});
