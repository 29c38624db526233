import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useInProcess, useModel } from "../helpers/fixture.js";
import { baseSettings } from "../helpers/hermes.js";
import { createOverlapProbe, type startInProcess } from "../helpers/in-process.js";

describe("calls of one step", () => {
  let model: FakeModel;
  let hermes: Awaited<ReturnType<typeof startInProcess>> | undefined;
  beforeEach(async () => {
    model = await useModel();
  });

  it("run concurrently when they are read-only, and results go back in call order", async () => {
    const order: string[] = [];
    const probe = createOverlapProbe();
    hermes = await useInProcess(baseSettings(model.url), [probe.tool("look_a", true, order), probe.tool("look_b", true, order)]);
    model.script({ toolCalls: [{ name: "look_a" }, { name: "look_b" }] }, { text: "both looked" });
    expect((await hermes.ask("look")).reply).toBe("both looked");
    expect(probe.maxActive).toBe(2);
    const results = model.requests[1]?.messages.filter((m) => m.role === "tool").map((m) => m.content);
    expect(results).toEqual(["look_a done", "look_b done"]);
  });

  it("run one after another, in the model's order, when they have side effects", async () => {
    const order: string[] = [];
    const probe = createOverlapProbe();
    hermes = await useInProcess(baseSettings(model.url), [probe.tool("poke_b", false, order), probe.tool("poke_a", false, order)]);
    model.script({ toolCalls: [{ name: "poke_b" }, { name: "poke_a" }] }, { text: "both poked" });
    expect((await hermes.ask("poke")).reply).toBe("both poked");
    expect(probe.maxActive).toBe(1);
    expect(order).toEqual(["start poke_b", "end poke_b", "start poke_a", "end poke_a"]);
  });
});
