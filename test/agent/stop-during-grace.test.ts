/**
 * A graceful stop lets runs finish for agent.shutdown_grace_s, and the chats still take commands then: a
 * /stop in that time stops the run. (Stopping runs is off only once the shutdown has let them finish, when
 * the connectors close: see openai-shutdown.test.ts.)
 */
import { beforeEach, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import type { FakeTelegram } from "../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram } from "../helpers/fixture.js";
import { baseSettings } from "../helpers/hermes.js";

const OWNER = 42;
let model: FakeModel;
let telegram: FakeTelegram;
beforeEach(async () => {
  model = await useModel();
  telegram = await useTelegram();
});

it("/stop during the shutdown's grace period stops the running run", async () => {
  const h = await useHermes({
    ...baseSettings(model.url),
    agent: { shutdown_grace_s: 30 },
    connectors: { cron: { enabled: false }, telegram: telegram.settings([OWNER]) },
  });
  await telegram.waitFor((c) => c.method === "getUpdates");
  model.script({ hang: true });
  telegram.sendText(OWNER, "something slow");
  await model.waitForRequests(1);
  const exited = h.stop();
  await h.waitForLog((l) => l.msg === "stopping: no new input; letting runs finish");
  const from = telegram.calls.length;
  telegram.sendText(OWNER, "/stop");
  const reply = await telegram.waitFor((c) => c.method === "sendMessage" && Number(c.params.chat_id) === OWNER, from);
  expect(reply.params.text).toBe("Stopped.");
  expect(await exited).toBe(0);
}, 60_000);
