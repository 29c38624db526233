/**
 * A graceful stop (`systemctl stop|restart hermes`) while an OpenAI-door request waits for an approval: the
 * door closes its clients' connections, and a client gone stops its run; during a stop that ran after the
 * store had closed (an uncaught "The database connection is not open", exit 1: systemd counted a failure),
 * or denied the approval the next start was to ask again (§6: a pending approval survives a restart).
 */
import OpenAI from "openai";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import type { FakeTelegram } from "../../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram } from "../../helpers/fixture.js";
import { baseSettings, readDb } from "../../helpers/hermes.js";
import { baseUrlOf, HTTP_TOKEN, httpEnv, httpSettings } from "../../helpers/http.js";

const OWNER = 42;

describe("the OpenAI door, stopped while a request waits for approval", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
  });

  for (const user of [undefined, "kitchen"]) {
    it(`exits 0, nothing uncaught, and leaves the approval to the next start (${user ? "a session" : "no session"})`, async () => {
      model.script({ toolCalls: [{ name: "write_file", arguments: { path: "p.txt", content: "x" } }] });
      const h = await useHermes(
        {
          ...baseSettings(model.url),
          agent: { shutdown_grace_s: 1 },
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
        .create({ model: "hermes", ...(user && { user }), messages: [{ role: "user", content: "write it" }] })
        .catch(() => undefined);
      await telegram.waitFor((c) => c.method === "sendMessage" && Boolean(c.params.reply_markup));

      const code = await h.stop();
      const errors = h.logs.filter((l) => Number(l.level) >= 50).map((l) => `${l.msg}: ${(l.err as { message?: string })?.message}`);
      expect(errors).toEqual([]);
      expect(code).toBe(0);
      const approvals = readDb(h.dbPath, (db) => db.prepare("SELECT status, decided_by FROM approvals").all());
      expect(approvals).toEqual([{ status: "pending", decided_by: null }]);
    });
  }
});
