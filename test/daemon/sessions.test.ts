import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, type Hermes } from "../helpers/hermes.js";

describe("sessions", () => {
  let model: FakeModel;
  beforeEach(async () => {
    model = await useModel();
  });

  it("answers two messages sent to one session at once in order, the second seeing the first", async () => {
    model.respond((req) => ({ text: `echo ${req.messages.at(-1)?.content.split("\n")[0]}`, delayMs: 50 }));
    const hermes = await useHermes(baseSettings(model.url));
    const first = hermes.ask("one", "--session", "same");
    await model.waitForRequests(1);
    const second = hermes.ask("two", "--session", "same");
    const [a, b] = await Promise.all([first, second]);
    expect(a.stdout).toBe("echo one\n");
    expect(b.stdout).toBe("echo two\n");
    const history = model.requests[1]?.messages.map((m) => m.content.split("\n")[0]);
    expect(history).toEqual(expect.arrayContaining(["one", "echo one", "two"]));
  });

  it("runs two sessions side by side", async () => {
    // The first session's model call only answers once the second session's call has arrived.
    model.script({ text: "first", gate: model.waitForRequests(2) }, { text: "second" });
    const settings = baseSettings(model.url);
    const hermes = await useHermes({ ...settings, model: { ...(settings.model as object), concurrency: 2 } });
    const [a, b] = await Promise.all([hermes.ask("a", "--session", "one"), waitThenAsk(hermes, model)]);
    expect(a.stdout).toBe("first\n");
    expect(b.stdout).toBe("second\n");
  });

  it("keeps the old session in the store when /new starts a fresh one", async () => {
    model.respond((req) => ({ text: `I see ${req.messages.length} messages` }));
    const hermes = await useHermes(baseSettings(model.url));
    await hermes.ask("remember this", "--session", "n");
    expect((await hermes.ask("and this", "--session", "n")).stdout).toBe("I see 4 messages\n");
    const { Client } = await import("../../src/cli/client.js");
    const client = await Client.connect(hermes.socketPath);
    const reply = await client.call({ op: "new", session: "n" });
    client.close();
    expect(reply).toMatchObject({ type: "result", ok: true });
    expect((await hermes.ask("fresh start", "--session", "n")).stdout).toBe("I see 2 messages\n");
  });
});

async function waitThenAsk(hermes: Hermes, model: FakeModel) {
  await model.waitForRequests(1);
  return hermes.ask("b", "--session", "two");
}
