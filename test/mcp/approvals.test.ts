import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import type { Call, FakeTelegram } from "../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram, useTempDir } from "../helpers/fixture.js";
import { baseSettings, type Hermes } from "../helpers/hermes.js";

const STDIO_SERVER = resolve(import.meta.dirname, "../fakes/mcp-stdio-server.mjs");
const OWNER = 42;

describe("a gated MCP call", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  let dir: string;
  let hermes: Hermes | undefined;
  const ledger = () => {
    const path = join(dir, "ledger.txt");
    return existsSync(path) ? readFileSync(path, "utf8").trim().split("\n") : [];
  };
  const sentTo = (predicate: (c: Call) => boolean, from = 0) =>
    telegram.waitFor((c) => c.method === "sendMessage" && Number(c.params.chat_id) === OWNER && predicate(c), from);

  beforeEach(async () => {
    dir = useTempDir();
    model = await useModel();
    telegram = await useTelegram();
  });

  it("approved over Telegram after the daemon was SIGKILLed runs exactly once", async () => {
    model.script({ toolCalls: [{ name: "home__set_light", arguments: { room: "hall", on: true } }] });
    model.respond((req) => ({ text: `Done: ${req.messages.filter((m) => m.role === "tool").at(-1)?.content}` }));
    const h = await useHermes(
      {
        ...baseSettings(model.url),
        agent: { confirm: [] },
        tools: { enabled: ["home__set_light"] },
        mcp: {
          servers: {
            home: { command: process.execPath, args: [STDIO_SERVER], env: { MCP_LEDGER: join(dir, "ledger.txt") } },
          },
        },
        connectors: { cron: { enabled: false }, telegram: telegram.settings([OWNER]) },
      },
      { dir: dir },
    );
    hermes = h;
    await telegram.waitFor((c) => c.method === "getUpdates");
    telegram.sendText(OWNER, "hall light on");
    const request = await sentTo((c) => Boolean(c.params.reply_markup));
    expect(request.params.text).toMatch(/home__set_light[\s\S]*MCP server home does not mark this tool read-only/);
    expect(ledger()).toEqual([]);
    await h.kill();
    hermes = await h.restart();
    const mark = telegram.calls.length;
    const approve = request.params.reply_markup.inline_keyboard[0][0].callback_data;
    telegram.press(OWNER, OWNER, request.result.message_id, approve);
    await sentTo((c) => c.params.text === "Done: the hall light is now on", mark);
    expect(ledger()).toEqual(["set_light hall true"]);
    telegram.press(OWNER, OWNER, request.result.message_id, approve);
    await telegram.waitFor((c) => c.method === "answerCallbackQuery" && /already approved/.test(c.params.text ?? ""), mark);
    expect(ledger()).toEqual(["set_light hall true"]);
    expect(model.requests).toHaveLength(2);
    const audit = (await hermes.cli(["audit", "--json"])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(audit).toEqual([expect.objectContaining({ tool: "home__set_light", decision: "approved", status: "ok" })]);
  });
});
