/**
 * A webhook delivery replayed with the same X-GitHub-Delivery runs once, also across a restart; one whose
 * run never started runs when it comes again.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { baseSettings, type Hermes, readDb, startHermes } from "../helpers/hermes.js";
import { baseUrlOf, githubSignature, httpEnv, httpSettings } from "../helpers/http.js";

const SECRET = "hook-secret-for-replays";

describe("replayed webhook deliveries", () => {
  let model: FakeModel;
  let hermes: Hermes | undefined;
  beforeEach(async () => {
    model = await startFakeModel();
    model.respond(() => ({ text: "noted" }));
  });
  afterEach(async () => {
    await hermes?.stop();
    hermes = undefined;
    await model.close();
  });
  const start = (hook: Record<string, unknown>) =>
    startHermes({ ...baseSettings(model.url), connectors: { cron: { enabled: false }, http: httpSettings([hook]) } }, { env: httpEnv });
  const sendAction = async (h: Hermes, action: string, delivery: string) => {
    const body = JSON.stringify({ action });
    return fetch(`${await baseUrlOf(h)}/v1/hooks/github`, {
      method: "POST",
      body,
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": githubSignature(SECRET, body),
        "x-github-event": "issues",
        "x-github-delivery": delivery,
      },
    });
  };
  const hookRuns = (h: Hermes) => readDb(h.dbPath, (db) => db.prepare("SELECT id FROM runs WHERE source = 'hook'").pluck().all());

  it("runs a delivery once and answers a replay with the first run's id", async () => {
    const hook = { name: "github", prompt: "GitHub: {{body.action}}", deliver: "cli:hooks", secret: SECRET };
    hermes = await start(hook);
    const send = (h: Hermes, delivery: string) => sendAction(h, "opened", delivery);
    const first = await send(hermes, "72d3162e-cc78-11e3-81ab-4c9367dc0958");
    expect(first.status).toBe(202);
    const { run_id } = (await first.json()) as { run_id: string };
    await hermes.waitForLog((l) => l.msg === "hook reply delivered" || l.msg === "hook run failed");
    const replay = await send(hermes, "72d3162e-cc78-11e3-81ab-4c9367dc0958");
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual({ run_id, duplicate: true });
    await hermes.stop();
    hermes = await hermes.restart();
    expect((await send(hermes, "72d3162e-cc78-11e3-81ab-4c9367dc0958")).status).toBe(200);
    expect(hookRuns(hermes)).toEqual([run_id]);
    expect((await send(hermes, "another-delivery")).status).toBe(202);
    await hermes.waitForLog((l) => l.msg === "hook reply delivered" || l.msg === "hook run failed");
    expect(hookRuns(hermes)).toHaveLength(2);
    expect(model.requests).toHaveLength(2);
  });

  it("runs a rate-limited delivery that a stop dropped when it is delivered again after the restart; a duplicate while it waits or once it ran", async () => {
    const hook = { name: "github", prompt: "GitHub: {{body.action}}", deliver: "cli:hooks", secret: SECRET, min_interval_s: 60 };
    hermes = await start(hook);
    expect((await sendAction(hermes, "opened", "d-1")).status).toBe(202);
    await hermes.waitForLog((l) => l.msg === "hook reply delivered");
    const waiting = await sendAction(hermes, "closed", "d-2");
    const { run_id: dropped, coalesced } = (await waiting.json()) as { run_id: string; coalesced?: boolean };
    expect({ status: waiting.status, coalesced }).toEqual({ status: 202, coalesced: true });
    const whileWaiting = await sendAction(hermes, "closed", "d-2");
    expect({ status: whileWaiting.status, body: await whileWaiting.json() }).toEqual({
      status: 200,
      body: { run_id: dropped, duplicate: true },
    });
    await hermes.stop();
    hermes = await hermes.restart();

    const redelivered = await sendAction(hermes, "closed", "d-2");
    expect(redelivered.status).toBe(202);
    const { run_id } = (await redelivered.json()) as { run_id: string };
    expect(run_id).not.toBe(dropped);
    await hermes.waitForLog((l) => l.msg === "hook reply delivered");
    expect(model.requests.at(-1)?.messages.at(-1)?.content).toMatch(/^GitHub: "closed"/);
    const again = await sendAction(hermes, "closed", "d-2");
    expect({ status: again.status, body: await again.json() }).toEqual({ status: 200, body: { run_id, duplicate: true } });
    expect(hookRuns(hermes)).toHaveLength(2);
    expect(hookRuns(hermes)).toContain(run_id);
    expect(model.requests).toHaveLength(2);
  });
});
