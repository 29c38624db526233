/**
 * A SIGHUP (or `hermes pair`'s reload) during the graceful stop reloaded a stopping daemon: systemd was told
 * RELOADING=1 and READY=1 after STOPPING=1, and the backups and the model's monitor started again, so the
 * process lingered until the fallback exit.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import type { NotifySocket } from "../fakes/notify-socket.js";
import { useHermes, useModel, useNotifySocket, useTempDir } from "../helpers/fixture.js";
import { baseSettings } from "../helpers/hermes.js";

describe("a reload asked for during the graceful stop", () => {
  let model: FakeModel;
  let notify: NotifySocket;
  let dir: string;
  beforeEach(async () => {
    model = await useModel();
    dir = useTempDir();
    notify = await useNotifySocket(dir);
  });

  it("is ignored: no RELOADING=1 or READY=1 after STOPPING=1, and the process exits promptly", async () => {
    model.script({ text: "slow", delayMs: 1500 });
    const hermes = await useHermes(
      { ...baseSettings(model.url), storage: { backup: { schedule: "30 3 * * *", keep: 2, dir: "./data/backups" } } },
      { dir, env: { NOTIFY_SOCKET: notify.path } },
    );
    const reply = hermes.ask("slow one");
    await model.waitForRequests(1);
    const exit = hermes.stop();
    const stopping = await notify.waitFor((m) => m.includes("STOPPING=1"));
    hermes.process.kill("SIGHUP");
    await hermes.waitForLog((l) => l.msg === "reload ignored: hermes is stopping");
    expect(await exit).toBe(0);
    expect((await reply).stdout).toContain("slow");
    const after = notify.messages.slice(notify.messages.indexOf(stopping) + 1);
    expect(after.filter((m) => /RELOADING=1|READY=1/.test(m))).toEqual([]);
    expect(hermes.logs.map((l) => l.msg)).not.toContain("something kept the stopped process alive; exiting");
  }, 25_000);
});
