/**
 * Runs that outlive a SIGKILL after they waited for an approval. A run gives up, and tells its chat, after
 * its second restart in the middle of its work: a run that once waited for approval stayed "suspended" in
 * the store while it went on working, so a restart resumed it without counting the attempt, again and again.
 */
import { expect, it } from "vitest";
import { useHermes, useModel, waitFor } from "../helpers/fixture.js";
import { baseSettings, readDb } from "../helpers/hermes.js";

it("a run killed twice while working after its approval gives up on the second restart, as any other run", async () => {
  const model = await useModel();
  // The gated call first; once its result is in, the model never answers (the daemon is killed meanwhile).
  model.respond((req) =>
    req.messages.at(-1)?.role === "user"
      ? { toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "x" } }] }
      : { hang: true },
  );
  const h = await useHermes({ ...baseSettings(model.url), tools: { enabled: ["clock", "write_file"] } });
  void h.ask("write it", "--yes");
  await model.waitForRequests(2);
  await h.kill();
  const second = await h.restart();
  await model.waitForRequests(3);
  await second.kill();
  const third = await second.restart();
  const run = () => readDb(third.dbPath, (db) => db.prepare("SELECT status, reply FROM runs").get() as { status: string; reply: string });
  await waitFor(() => run().status === "interrupted" || model.requests.length > 3, { message: "the run to end or resume" });
  expect(run()).toMatchObject({ status: "interrupted", reply: expect.stringMatching(/restarted twice while working on “write it”/) });
  expect(model.requests).toHaveLength(3);
  expect(readDb(third.dbPath, (db) => db.prepare("SELECT status FROM tool_calls").pluck().all())).toEqual(["ok"]);
}, 60_000);
