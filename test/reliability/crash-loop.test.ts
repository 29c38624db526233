import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { type Call, type FakeTelegram, startFakeTelegram } from "../fakes/telegram-server.js";
import { baseSettings, createTempDir, type Hermes, readDb, startHermes } from "../helpers/hermes.js";

const OWNER = 42;
const ITERATIONS = Number(process.env.HERMES_SOAK_ITERATIONS) || (process.env.HERMES_SOAK === "1" ? 25 : 8);

/** Deterministic randomness: a failing iteration can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("the crash loop", () => {
  const dir = createTempDir();
  let model: FakeModel;
  let telegram: FakeTelegram;
  afterAll(async () => {
    await telegram?.close();
    await model?.close();
    dir.cleanup();
  });

  it(
    `survives ${ITERATIONS} SIGKILLs at random moments: nothing lost, nothing doubled, approved calls ran once, denied never`,
    async () => {
      model = await startFakeModel();
      telegram = await startFakeTelegram();
      model.respond((req) => {
        const last = req.messages.at(-1);
        const id = req.messages.findLast((m) => m.role === "user")?.content.match(/^(task|chat) (\S+)/);
        if (last?.role === "user" && id?.[1] === "task")
          return { toolCalls: [{ name: "shell", arguments: { command: `echo ${id[2]} >> ledger.txt` } }], delayMs: 5 };
        return { text: `done ${id?.[2] ?? "?"}`, delayMs: 5 };
      });
      const settings = {
        ...baseSettings(model.url),
        tools: { enabled: ["clock", "shell"] },
        connectors: {
          cron: { enabled: false },
          telegram: telegram.settings([OWNER]),
        },
      };
      const random = rng(2026);
      const approved = new Set<string>();
      const denied = new Set<string>();
      let answeredUpTo = 0;
      const answerApprovals = (calls: Call[]) => {
        for (; answeredUpTo < calls.length; answeredUpTo++) {
          const c = calls[answeredUpTo] as Call;
          const keyboard = c.params.reply_markup?.inline_keyboard?.[0];
          if (c.method !== "sendMessage" || !keyboard) continue;
          const id = String(c.params.text).match(/echo (\S+) >>/)?.[1] as string;
          const approve = Number(id.split("-")[1]) % 2 === 1;
          (approve ? approved : denied).add(id);
          telegram.press(OWNER, OWNER, c.result.message_id, keyboard[approve ? 0 : 1].callback_data);
        }
      };
      // A final reply: the model's answer, or hermes giving up on a run killed twice while it worked.
      const finals = () =>
        new Set(
          telegram.calls.flatMap((c) => {
            const text = String(c.params.text);
            const id =
              c.method === "sendMessage" &&
              (text.match(/^done (\S+)$/)?.[1] ?? text.match(/working on “(?:task|chat) (\S+)” and gave up/)?.[1]);
            return id ? [`done ${id}`] : [];
          }),
        );
      let hermes: Hermes | undefined;
      for (let i = 0; i < ITERATIONS; i++) {
        expect(integrity(dir.path)).toBe("ok");
        hermes = hermes ? await hermes.restart() : await startHermes(settings, { dir: dir.path });
        answerApprovals(telegram.calls);
        for (let k = 0; k < 4; k++) telegram.sendText(OWNER, `${k % 2 ? "task" : "chat"} ${i}-${k}`);
        // Kill after a random number of the daemon's messages, or once this round is fully answered.
        const killAfter = Math.floor(random() * 8);
        const round = i;
        const roundDone = telegram.waitFor(() => [0, 1, 2, 3].every((k) => finals().has(`done ${round}-${k}`)));
        for (let seen = 0; seen < killAfter; seen++) {
          const mark = telegram.calls.length;
          const next = telegram.waitFor((c) => c.method === "sendMessage" || c.method === "editMessageText", mark);
          if ((await Promise.race([next.then(() => "event"), roundDone.then(() => "done")])) === "done") break;
          answerApprovals(telegram.calls);
        }
        await hermes.kill();
      }
      expect(integrity(dir.path)).toBe("ok");
      hermes = await (hermes as Hermes).restart();
      answerApprovals(telegram.calls);
      const sent = ITERATIONS * 4;
      // Drain: every message gets its final reply ("done <id>"), approvals answered as they come.
      while (finals().size < sent) {
        await telegram.waitFor(() => true, telegram.calls.length);
        answerApprovals(telegram.calls);
      }
      const pending = JSON.parse((await hermes.cli(["approvals", "list"])).stdout === "no pending approvals\n" ? "[]" : "[1]");
      expect(pending).toEqual([]);
      await hermes.stop();

      const db = new Database(join(dir.path, "data/hermes.db"), { readonly: true });
      const userMessages = db.prepare("SELECT content FROM messages WHERE role = 'user'").pluck().all() as string[];
      const ids = userMessages.map((m) => m.split("\n")[0]);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(sent);
      const calls = db.prepare("SELECT args, decision, status FROM tool_calls WHERE tool = 'shell'").all() as {
        args: string;
        decision: string;
        status: string;
      }[];
      db.close();
      const ledger = existsSync(join(dir.path, "data/files/ledger.txt"))
        ? readFileSync(join(dir.path, "data/files/ledger.txt"), "utf8").trim().split("\n").filter(Boolean)
        : [];
      expect(new Set(ledger).size).toBe(ledger.length);
      for (const id of denied) expect(ledger).not.toContain(id);
      for (const call of calls) {
        const id = call.args.match(/echo (\S+) >>/)?.[1] as string;
        if (call.decision === "approved" && call.status === "ok") expect(ledger).toContain(id);
        if (call.decision !== "approved") expect(ledger).not.toContain(id);
      }
      expect(calls.every((c) => c.decision !== "pending")).toBe(true);
    },
    30_000 + ITERATIONS * 10_000,
  );
});

function integrity(dir: string): string {
  const path = join(dir, "data/hermes.db");
  if (!existsSync(path)) return "ok";
  return readDb(path, (db) => db.pragma("integrity_check", { simple: true }) as string);
}
