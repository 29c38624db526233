import { beforeEach, describe, expect, it } from "vitest";
import { Client } from "../../src/cli/client.js";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings } from "../helpers/hermes.js";

describe("summaries in the running daemon", () => {
  let model: FakeModel;

  beforeEach(async () => {
    model = await useModel();
  });

  it("compacts on /compact in hermes chat and shows the summary in hermes sessions and hermes export", async () => {
    const hermes = await useHermes(baseSettings(model.url));
    model.script({ text: "Hello Ada." }, { text: "Tea it is." });
    const chat = await hermes.cli(["chat", "--session", "c"], { input: "my name is Ada\nI like tea\n/compact\n/exit\n" });
    expect(chat.code).toBe(0);
    expect(chat.stdout).toContain("compacted 1 turn(s) into the summary");
    const compaction = model.requests.find((r) => r.compaction);
    expect(compaction?.messages[1]?.content).toContain("User: my name is Ada");

    const show = await hermes.cli(["sessions", "show", "cli:c"]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(
      /summary \(compaction 1, 1 turn\(s\), messages #1–#2, made [\d-]+ [\d:]+\):\n {2}\[summary by the fake model\] my name is Ada/,
    );
    // The user's own words, without the time note the runner appends for the model.
    expect(show.stdout).toMatch(/^ {2}#3 user: I like tea$/m);
    expect(show.stdout).not.toContain("Current time");
    const list = await hermes.cli(["sessions"]);
    expect(list.stdout).toMatch(/^cli:c\s+#1 {2}open, 4 message\(s\), 1 turn\(s\) summarised, last /);
    const exported = await hermes.cli(["export", "--session", "cli:c"]);
    expect(exported.stdout).toContain("> **Summary of the earlier conversation:** [summary by the fake model] my name is Ada");
    expect((await hermes.cli(["sessions", "show", "cli:nothing"])).code).toBe(1);

    model.script({ text: "Yes, Ada." });
    expect((await hermes.ask("do you know my name?", "--session", "c")).stdout).toBe("Yes, Ada.\n");
    expect(model.requests.at(-1)?.messages[0]?.content).toContain("[summary by the fake model] my name is Ada");
  }, 60_000);

  it("logs a failed compaction and answers the run with the oldest turns dropped", async () => {
    const settings = baseSettings(model.url);
    const hermes = await useHermes({
      ...settings,
      model: { ...(settings.model as object), context_tokens: 2048, max_output_tokens: 256 },
      tools: { enabled: ["clock"] },
    });
    model.scriptCompaction({ status: 400 });
    model.respond((req) => ({ text: `answer to ${req.messages.at(-1)?.content.split(" ").slice(0, 2).join(" ")}` }));
    const client = await Client.connect(hermes.socketPath);
    try {
      for (let i = 0; !model.requests.some((r) => r.compaction); i++) {
        let done: unknown;
        await client.stream({ op: "ask", session: "f", text: `turn ${i} ${"w".repeat(400)}` }, (reply) => {
          done = reply;
          return reply.type === "done";
        });
        expect(done).toMatchObject({ type: "done", stop_reason: "done", reply: `answer to turn ${i}` });
      }
    } finally {
      client.close();
    }
    const line = await hermes.waitForLog((l) => l.msg === "compaction failed; the oldest turns are dropped instead");
    expect(line).toMatchObject({ session: "cli:f", level: 40 });
    expect(String(line.reason)).toContain("400");
  }, 60_000);
});
