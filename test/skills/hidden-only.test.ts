import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import type { FakeTelegram } from "../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram, useTempDir } from "../helpers/fixture.js";
import { baseSettings } from "../helpers/hermes.js";
import { writeSkill } from "./fixture.js";

const OWNER = 42;

describe("a skill marked disable-model-invocation, when it is the only skill", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  let dir: string;
  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
    dir = useTempDir();
  });

  it("still lets the model read its files in the conversation where /<skill> was sent", async () => {
    writeSkill(join(dir, "skills"), "secret-routine", {
      front: "disable-model-invocation: true\n",
      body: "Follow steps.md.",
      files: { "steps.md": "Step one: water the ferns." },
    });
    model.respond((req) => {
      const last = req.messages.at(-1);
      if (last?.role === "tool") return { text: `read: ${last.content}` };
      return { toolCalls: [{ name: "skill", arguments: { name: "secret-routine", file: "steps.md" } }] };
    });
    await useHermes(
      {
        ...baseSettings(model.url),
        tools: { enabled: ["clock", "skill"] },
        skills: { dirs: ["./skills"] },
        connectors: { cron: { enabled: false }, telegram: telegram.settings([OWNER]) },
      },
      { dir },
    );
    await telegram.waitFor((c) => c.method === "getUpdates");
    telegram.sendText(OWNER, "/secret_routine now");
    const reply = await telegram.waitFor(
      (c) => c.method === "sendMessage" && Number(c.params.chat_id) === OWNER && String(c.params.text).startsWith("read:"),
    );
    expect(model.requests[0]?.tools?.map((t) => t.function?.name)).toContain("skill");
    expect(reply.params.text).toBe("read: Step one: water the ferns.");
  });
});
