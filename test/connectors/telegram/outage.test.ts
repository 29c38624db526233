import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPoller } from "../../../connectors/telegram/polling.js";
import { createLogger } from "../../../src/log.js";
import { openStore } from "../../../src/store/store.js";
import { type FakeModel, startFakeModel } from "../../fakes/model-server.js";
import { type NotifySocket, startNotifySocket } from "../../fakes/notify-socket.js";
import { type FakeTelegram, startFakeTelegram } from "../../fakes/telegram-server.js";
import { baseSettings, createTempDir, type Hermes, startHermes } from "../../helpers/hermes.js";

const OWNER = 42;

describe("an internet outage (Telegram refuses connections)", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  let notify: NotifySocket;
  let dir: ReturnType<typeof createTempDir>;
  let hermes: Hermes | undefined;
  beforeEach(async () => {
    model = await startFakeModel();
    telegram = await startFakeTelegram();
    dir = createTempDir();
    notify = await startNotifySocket(dir.path);
  });
  afterEach(async () => {
    if (hermes?.process.exitCode === null) await hermes.stop();
    hermes = undefined;
    notify.close();
    await telegram.close();
    await model.close();
    dir.cleanup();
  });

  it("is not a hung daemon: the watchdog keeps pinging, status says offline since …, retrying with the cause, in one log line", async () => {
    const settings = { ...baseSettings(model.url), connectors: { cron: { enabled: false }, telegram: telegram.settings([OWNER]) } };
    hermes = await startHermes(settings, { dir: dir.path, env: { NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: "400000" } });
    await telegram.waitFor((c) => c.method === "getUpdates");
    const port = Number(new URL(telegram.apiRoot).port);
    await telegram.close();
    const outageAt = Date.now();
    const offline = await hermes.waitForLog((l) => l.msg === "telegram offline; retrying");
    // The long poll in flight is cut (socket hang up); the attempts after it are refused.
    expect(String(offline.cause)).toMatch(/socket hang up|ECONNREFUSED 127\.0\.0\.1/);
    // With poll_timeout_s 1 a poller without progress counted as stuck after 7 s: wait past that, then
    // the pings must still come.
    await new Promise((r) => setTimeout(r, Math.max(0, outageAt + 9000 - Date.now())));
    await notify.waitFor((m) => m.includes("WATCHDOG=1"), notify.messages.length);
    expect(hermes.logs.some((l) => l.msg === "unhealthy: watchdog pings paused")).toBe(false);
    expect(notify.messages.some((m) => /STATUS=serving; cli ok; telegram offline/.test(m))).toBe(true);
    const status = JSON.parse((await hermes.cli(["status", "--json"])).stdout);
    const tg = status.connectors.find((c: { name: string }) => c.name === "telegram");
    expect(tg).toMatchObject({ ok: false, retrying: true });
    expect(tg.detail).toMatch(/^offline since \d{4}-\d\d-\d\dT[\d:.]+Z, retrying \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/);
    expect((await hermes.cli(["status"])).stdout).toMatch(/^telegram {3}offline since .*, retrying \(connect ECONNREFUSED/m);
    // One line for the whole streak (several attempts failed by now), no stack per retry.
    expect(hermes.logs.filter((l) => l.connector === "telegram" && Number(l.level) >= 40)).toHaveLength(1);
    telegram = await startFakeTelegram(port);
    const back = await hermes.waitForLog((l) => l.msg === "telegram back online");
    expect(Number(back.offlineS)).toBeGreaterThanOrEqual(8);
    const after = JSON.parse((await hermes.cli(["status", "--json"])).stdout);
    expect(after.connectors.find((c: { name: string }) => c.name === "telegram")).toMatchObject({ ok: true, detail: "polling" });
  }, 60_000);
});

describe("a stuck poller (no attempt ends)", () => {
  it("is unhealthy once an attempt is overdue, so the watchdog stops and systemd restarts the deaf daemon", async () => {
    const dir = createTempDir();
    const store = openStore(`${dir.path}/hermes.db`);
    let now = Date.now();
    const realNow = Date.now;
    Date.now = () => now;
    try {
      let calls = 0;
      // A getUpdates that never settles and ignores its abort signal: the attempt itself hangs.
      const getUpdates = () => {
        calls++;
        return new Promise(() => {});
      };
      const api = { getUpdates } as never;
      const poller = createPoller({ api, store: store.inbound, log: createLogger("silent"), pollTimeoutS: 1 });
      void poller.supplier.supply(10, new AbortController().signal as never);
      expect(calls).toBe(1);
      expect(poller.health()).toEqual({ ok: true, detail: "polling" });
      now += 6900; // stall (2 s) and grace (5 s) not yet over
      expect(poller.health().ok).toBe(true);
      now += 200;
      const health = poller.health();
      expect(health).toMatchObject({ ok: false });
      expect(health.retrying).toBeUndefined();
      expect(health.detail).toMatch(/^getUpdates is stuck: an attempt due by .* has not ended/);
    } finally {
      Date.now = realNow;
      store.close();
      dir.cleanup();
    }
  });
});
