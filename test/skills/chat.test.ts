import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { BOT_USER, type FakeDiscord } from "../fakes/discord-server.js";
import type { FakeModel } from "../fakes/model-server.js";
import type { FakeTelegram } from "../fakes/telegram-server.js";
import { useDiscord, useHermes, useModel, useTelegram, useTempDir } from "../helpers/fixture.js";
import { baseSettings, type Hermes } from "../helpers/hermes.js";
import { writeManySkills, writeSkill } from "./fixture.js";

const OWNER = 42;
/** The menu's built-in commands (SPEC §20), before the skills. */
const BUILT_IN = ["new", "stop", "status", "compact", "whoami", "help"];
const DISCORD_OWNER = "2000000000000000042";
const lastUser = (req: { messages: { role: string; content: string }[] } | undefined) =>
  req?.messages.filter((m) => m.role === "user").at(-1)?.content ?? "";

function writeFixtureSkills(root: string): void {
  writeSkill(root, "daily-brief", {
    description: "Write the morning brief.",
    body: "Brief in three bullet points: weather, calendar, news.",
  });
  writeSkill(root, "quiet-helper", { front: "user-invocable: false\n", body: "Only the model loads this one." });
}

describe("/<skill-name> text in the chats", () => {
  let model: FakeModel;
  let dir: string;
  beforeEach(async () => {
    model = await useModel();
    dir = useTempDir();
  });

  describe("in Telegram", () => {
    let telegram: FakeTelegram;
    beforeEach(async () => {
      telegram = await useTelegram();
    });
    let hermes: Hermes | undefined;
    const held = () => hermes as Hermes;
    const start = async () => {
      hermes = await useHermes(
        {
          ...baseSettings(model.url),
          skills: { dirs: ["./skills"] },
          connectors: { cron: { enabled: false }, telegram: telegram.settings([OWNER]) },
        },
        { dir },
      );
      await telegram.waitFor((c) => c.method === "getUpdates");
    };
    const replied = (text: string) =>
      telegram.waitFor((c) => c.method === "sendMessage" && Number(c.params.chat_id) === OWNER && c.params.text === text);

    it("sends the text with the skill's body loaded for the turn, by its name with '-' or '_'; the menu lists it with '_'", async () => {
      writeFixtureSkills(join(dir, "skills"));
      model.respond(() => ({ text: "done" }));
      await start();
      const menu = await telegram.waitFor((c) => c.method === "setMyCommands");
      const names = menu.params.commands.map((c: { command: string }) => c.command);
      expect(names).toEqual([...BUILT_IN, "daily_brief"]);
      telegram.sendText(OWNER, "/daily_brief for Monday");
      await replied("done");
      const first = lastUser(model.requests[0]);
      expect(first).toContain("Brief in three bullet points: weather, calendar, news.");
      expect(first).toMatch(/<\/skill>\n\nfor Monday\n\n\(Current time:/);
      telegram.sendText(OWNER, "/daily-brief");
      await model.waitForRequests(2);
      expect(lastUser(model.requests[1])).toContain('Use the skill "daily-brief"');
      // Not user-invocable, unknown, or a built-in: not a skill command.
      telegram.sendText(OWNER, "/quiet_helper please");
      await replied("I do not know that command. Try /help.");
      telegram.sendText(OWNER, "/status");
      await telegram.waitFor((c) => c.method === "sendMessage" && String(c.params.text).startsWith("hermes "));
      expect(model.requests).toHaveLength(2);
    });

    it("updates the menu when a reload changes the skills, and only then", async () => {
      writeFixtureSkills(join(dir, "skills"));
      await start();
      const hermes = held();
      await telegram.waitFor((c) => c.method === "setMyCommands");
      const reloaded = async () => {
        const before = hermes.logs.length;
        hermes.process.kill("SIGHUP");
        await hermes.waitForLog((l) => l.msg === "config reloaded" && hermes.logs.indexOf(l) >= before);
      };
      await reloaded(); // nothing changed: the menu is not sent again
      writeSkill(join(dir, "skills"), "plan-trip", { description: "Plan a trip by train." });
      const from = telegram.calls.length;
      await reloaded();
      const menu = await telegram.waitFor((c) => c.method === "setMyCommands", from);
      expect(menu.params.commands.map((c: { command: string }) => c.command)).toEqual([...BUILT_IN, "daily_brief", "plan_trip"]);
      expect(telegram.calls.filter((c) => c.method === "setMyCommands")).toHaveLength(2);
    });

    it("a skill marked disable-model-invocation is the model's to read only in a chat where it was sent with /<skill>", async () => {
      writeFixtureSkills(join(dir, "skills"));
      writeSkill(join(dir, "skills"), "secret-routine", {
        front: "disable-model-invocation: true\n",
        body: "Follow steps.md.",
        files: { "steps.md": "Step one: water the ferns." },
      });
      model.respond((req) => {
        const last = req.messages.at(-1);
        const asked = req.messages.findLast((m) => m.role === "user")?.content ?? "";
        // A turn of many calls, as a routine has: more messages than a glance back would reach.
        if (asked.includes("many clocks")) {
          const results = req.messages.slice(req.messages.findLastIndex((m) => m.role === "user")).filter((m) => m.role === "tool");
          if (results.length >= 40) return { text: "clocks read" };
          const zones = Intl.supportedValuesOf("timeZone").slice(results.length, results.length + 20);
          return { toolCalls: zones.map((timezone) => ({ name: "clock", arguments: { timezone } })) };
        }
        if (last?.role === "tool") return { text: `read: ${last.content}` };
        const file = last?.content.includes("which routines") ? {} : { file: "steps.md" };
        return { toolCalls: [{ name: "skill", arguments: { name: "secret-routine", ...file } }] };
      });
      hermes = await useHermes(
        {
          ...baseSettings(model.url),
          tools: { enabled: ["clock", "skill"] },
          skills: { dirs: ["./skills"] },
          connectors: { cron: { enabled: false }, telegram: telegram.settings([OWNER]) },
        },
        { dir },
      );
      await telegram.waitFor((c) => c.method === "getUpdates");
      // Asked on its own, the model does not find it, nor sees it named.
      telegram.sendText(OWNER, "which routines are there?");
      await replied("read: error: no skill named 'secret-routine'; the skills are: daily-brief, quiet-helper");
      // Sent by the owner, its files are there for that conversation, in the turns after it too.
      telegram.sendText(OWNER, "/secret_routine now");
      await replied("read: Step one: water the ferns.");
      telegram.sendText(OWNER, "read many clocks");
      await replied("clocks read");
      const mark = telegram.calls.length;
      telegram.sendText(OWNER, "and go on");
      await telegram.waitFor((c) => c.method === "sendMessage" && c.params.text === "read: Step one: water the ferns.", mark);
      // A new conversation starts without it.
      telegram.sendText(OWNER, "/new");
      await telegram.waitFor((c) => c.method === "sendMessage" && /new conversation/i.test(String(c.params.text)), mark);
      telegram.sendText(OWNER, "read its steps");
      await replied("read: error: no skill named 'secret-routine'; the skills are: daily-brief, quiet-helper");
    });

    it("caps the menu under Telegram's 100 commands", async () => {
      writeManySkills(join(dir, "skills"), 120, 30);
      await start();
      const menu = await telegram.waitFor((c) => c.method === "setMyCommands");
      // The six built-ins, then skills up to 100 less the seven names the connector keeps (/start too).
      expect(menu.params.commands).toHaveLength(99);
      expect(menu.params.commands.at(-1).command).toBe("skill_093");
    });
  });

  describe("in Discord", () => {
    let discord: FakeDiscord;
    beforeEach(async () => {
      discord = await useDiscord();
    });

    it("registers the slash commands again when a reload changes the skills", async () => {
      writeFixtureSkills(join(dir, "skills"));
      const hermes = await useHermes(
        {
          ...baseSettings(model.url),
          skills: { dirs: ["./skills"] },
          connectors: { cron: { enabled: false }, discord: discord.settings([DISCORD_OWNER]) },
        },
        { dir },
      );
      const put = `PUT /applications/${BOT_USER.id}/commands`;
      await discord.waitFor((c) => c.method === put);
      writeSkill(join(dir, "skills"), "plan-trip", { description: "Plan a trip by train." });
      const from = discord.calls.length;
      const before = hermes.logs.length;
      hermes.process.kill("SIGHUP");
      await hermes.waitForLog((l) => l.msg === "config reloaded" && hermes.logs.indexOf(l) >= before);
      const again = await discord.waitFor((c) => c.method === put, from);
      expect(again.body.map((c: { name: string }) => c.name).slice(-2)).toEqual(["daily-brief", "plan-trip"]);
    });

    it("registers the skills as slash commands and runs them typed or from the menu", async () => {
      writeFixtureSkills(join(dir, "skills"));
      model.respond(() => ({ text: "done" }));
      const hermes = await useHermes(
        {
          ...baseSettings(model.url),
          skills: { dirs: ["./skills"] },
          connectors: { cron: { enabled: false }, discord: discord.settings([DISCORD_OWNER]) },
        },
        { dir },
      );
      await hermes.waitForLog((l) => l.msg === "discord gateway ready");
      const commands = await discord.waitFor((c) => c.method === `PUT /applications/${BOT_USER.id}/commands`);
      expect(commands.body.map((c: { name: string }) => c.name)).toEqual([...BUILT_IN, "daily-brief"]);
      expect(commands.body.at(-1).options).toEqual([{ type: 3, name: "text", description: "What to do with the skill", required: false }]);
      const dm = discord.dmChannelOf(DISCORD_OWNER);
      discord.dm(DISCORD_OWNER, "/daily-brief for Tuesday");
      await model.waitForRequests(1);
      expect(lastUser(model.requests[0])).toMatch(/Brief in three bullet points[\s\S]*<\/skill>\n\nfor Tuesday/);
      discord.slash(DISCORD_OWNER, dm, "daily-brief", [{ name: "text", type: 3, value: "for Friday" }]);
      const echo = await discord.waitFor((c) => c.method === "callback" && c.body.type === 4);
      expect(echo.body.data.content).toBe("/daily-brief for Friday");
      await model.waitForRequests(2);
      expect(lastUser(model.requests[1])).toMatch(/Brief in three bullet points[\s\S]*<\/skill>\n\nfor Friday/);
      await discord.waitFor((c) => c.method === `POST /channels/${dm}/messages` && c.body.content === "done", 0);
    });
  });
});
