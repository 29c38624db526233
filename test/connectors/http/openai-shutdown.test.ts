/**
 * The OpenAI door across a stop or a restart while a request waits for an approval.
 * - A graceful stop (`systemctl stop|restart hermes`) closes the door's connections, and a client gone stops
 *   its run: during a stop that ran after the store had closed (an uncaught "The database connection is not
 *   open", exit 1: systemd counted a failure), or denied the approval the next start was to ask again (§6).
 * - A request without a session keeps nothing but the audit (§21), its image included: also when a restart
 *   ends its run (the image was removed only by the process that took it in).
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import type { FakeTelegram } from "../../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram } from "../../helpers/fixture.js";
import { baseSettings, type Hermes, readDb } from "../../helpers/hermes.js";
import { baseUrlOf, HTTP_TOKEN, httpEnv, httpSettings } from "../../helpers/http.js";
import { png } from "../../media/images.fixture.js";

const OWNER = 42;

describe("the OpenAI door, stopped while a request waits for approval", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
  });

  /** A daemon whose API asks in the owner's Telegram chat, and a request (`content`) waiting for that approval. */
  async function waitingForApproval(content: OpenAI.ChatCompletionUserMessageParam["content"], user?: string, graceS = 1): Promise<Hermes> {
    model.script({ toolCalls: [{ name: "write_file", arguments: { path: "p.txt", content: "x" } }] });
    const h = await useHermes(
      {
        ...baseSettings(model.url),
        agent: { shutdown_grace_s: graceS },
        connectors: {
          cron: { enabled: false },
          telegram: telegram.settings([OWNER]),
          http: httpSettings([], { openai: { enabled: true, approvals_to: `telegram:${OWNER}` } }),
        },
      },
      { env: httpEnv },
    );
    const client = new OpenAI({ baseURL: `${await baseUrlOf(h)}/v1`, apiKey: HTTP_TOKEN, maxRetries: 0 });
    void client.chat.completions
      .create({ model: "hermes", ...(user && { user }), messages: [{ role: "user", content }] })
      .catch(() => undefined);
    await telegram.waitFor((c) => c.method === "sendMessage" && Boolean(c.params.reply_markup));
    return h;
  }

  for (const user of [undefined, "kitchen"]) {
    it(`exits 0, nothing uncaught, and leaves the approval to the next start (${user ? "a session" : "no session"})`, async () => {
      const h = await waitingForApproval("write it", user);
      const code = await h.stop();
      const errors = h.logs.filter((l) => Number(l.level) >= 50).map((l) => `${l.msg}: ${(l.err as { message?: string })?.message}`);
      expect(errors).toEqual([]);
      expect(code).toBe(0);
      const approvals = readDb(h.dbPath, (db) => db.prepare("SELECT status, decided_by FROM approvals").all());
      expect(approvals).toEqual([{ status: "pending", decided_by: null }]);
    });
  }

  it("answers a request that comes while it stops with 503 and Retry-After (which the SDKs retry), JSON or streamed, not a 200", async () => {
    // A run the model keeps busy holds the stop in its grace, the door still open.
    model.script({ text: "thinking", hangAfterText: true });
    const h = await useHermes(
      {
        ...baseSettings(model.url),
        agent: { shutdown_grace_s: 3 },
        connectors: { cron: { enabled: false }, http: httpSettings([], { openai: { enabled: true } }) },
      },
      { env: httpEnv },
    );
    const base = await baseUrlOf(h);
    const ask = (content: string, stream = false) =>
      fetch(`${base}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${HTTP_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "hermes", stream, messages: [{ role: "user", content }] }),
      });
    void ask("a long one").catch(() => undefined);
    await model.waitForRequests(1);
    const stopped = h.stop();
    await h.waitForLog((l) => l.msg === "stopping: no new input; letting runs finish");
    for (const stream of [false, true]) {
      const res = await ask("are you there?", stream);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      expect(await res.json()).toMatchObject({ error: { type: "server_error", code: "shutting_down" } });
    }
    expect(await stopped).toBe(0);
    // Neither was taken: no run of them, nothing for the next start to answer.
    expect(readDb(h.dbPath, (db) => db.prepare("SELECT count(*) AS n FROM runs WHERE input LIKE 'are you there?%'").get())).toEqual({
      n: 0,
    });
  });

  for (const how of ["kill", "stop"] as const) {
    it(`keeps no copy of a sessionless request's image after a restart (${how}) ends its run`, async () => {
      model.capabilities["hermes3:8b"] = ["completion", "tools", "vision"];
      const url = `data:image/png;base64,${png(64, 48).toString("base64")}`;
      const h = await waitingForApproval([
        { type: "text", text: "file this photo" },
        { type: "image_url", image_url: { url } },
      ]);
      const media = join(h.dir, "data/media");
      const pngs = () => (existsSync(media) ? readdirSync(media, { recursive: true }).filter((f) => String(f).endsWith(".png")) : []);
      expect(pngs()).toHaveLength(1); // held while the run lives
      await (how === "kill" ? h.kill() : h.stop());
      const again = await h.restart();
      await again.waitForLog((l) => l.msg === "http listening");
      // The run is over (it cannot go on without its context, which was in memory) and its photo is gone.
      expect(readDb(again.dbPath, (db) => db.prepare("SELECT status FROM runs WHERE source = 'api'").get())).toEqual({
        status: "interrupted",
      });
      expect(pngs()).toEqual([]);
    });
  }
});
