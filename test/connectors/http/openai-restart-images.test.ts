/**
 * A request without a session keeps nothing but the audit (§21), its image included: also when hermes
 * restarts while the run waits for approval (its image was removed only by the process that took it in).
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import type { FakeTelegram } from "../../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram } from "../../helpers/fixture.js";
import { baseSettings, readDb } from "../../helpers/hermes.js";
import { baseUrlOf, HTTP_TOKEN, httpEnv, httpSettings } from "../../helpers/http.js";
import { png } from "../../media/images.fixture.js";

const OWNER = 42;

describe("OpenAI door: a request without a session across a restart", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
  });

  for (const how of ["kill", "stop"] as const) {
    it(`keeps no copy of its image after a restart (${how}) ends the run`, async () => {
      model.capabilities["hermes3:8b"] = ["completion", "tools", "vision"];
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
      const url = `data:image/png;base64,${png(64, 48).toString("base64")}`;
      void client.chat.completions
        .create({
          model: "hermes",
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "file this photo" },
                { type: "image_url", image_url: { url } },
              ],
            },
          ],
        })
        .catch(() => undefined);
      await telegram.waitFor((c) => c.method === "sendMessage" && Boolean(c.params.reply_markup));
      const media = join(h.dir, "data/media");
      const pngs = () => (existsSync(media) ? readdirSync(media, { recursive: true }).filter((f) => String(f).endsWith(".png")) : []);
      expect(pngs()).toHaveLength(1); // held while the run lives

      await (how === "kill" ? h.kill() : h.stop());
      const again = await h.restart();
      await again.waitForLog((l) => l.msg === "http listening");
      // The run is over (it cannot go on without its in-memory context) ...
      const run = readDb(again.dbPath, (db) => db.prepare("SELECT status FROM runs WHERE source = 'api'").get());
      expect(run).toEqual({ status: "interrupted" });
      // ... and the photo it brought is not kept either.
      expect(pngs()).toEqual([]);
    });
  }
});
