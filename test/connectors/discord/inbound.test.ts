/**
 * What the owner sends on Discord reaches the model in order and is never dropped in silence: a file's
 * download let the text sent after it reach the model first; a forwarded message (its text is in a
 * snapshot, not in its content), one with only embeds, and a bare mention in a channel got no answer at all.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { type DiscordCall, type FakeDiscord, GUILD_CHANNEL } from "../../fakes/discord-server.js";
import type { FakeModel } from "../../fakes/model-server.js";
import { useDiscord, useHermes, useModel } from "../../helpers/fixture.js";
import { baseSettings } from "../../helpers/hermes.js";

const OWNER = "2000000000000000042";

describe("messages from the owner on Discord", () => {
  let model: FakeModel;
  let discord: FakeDiscord;
  const start = async () => {
    const hermes = await useHermes({
      ...baseSettings(model.url),
      connectors: { cron: { enabled: false }, discord: discord.settings([OWNER]) },
    });
    await hermes.waitForLog((l) => l.msg === "discord gateway ready");
    return hermes;
  };
  const sentIn = (channel: string, from = 0, predicate: (c: DiscordCall) => boolean = () => true) =>
    discord.waitFor((c) => c.method === `POST /channels/${channel}/messages` && predicate(c), from);

  beforeEach(async () => {
    model = await useModel();
    discord = await useDiscord();
    model.respond(() => ({ text: "ok" }));
  });

  it("reach the model in the order they were sent, a file's download and all", async () => {
    await start();
    discord.dmWithFiles(OWNER, "here are my notes", [{ name: "notes.txt", contentType: "text/plain", bytes: Buffer.from("buy milk\n") }]);
    discord.dm(OWNER, "now summarise them");
    await model.waitForRequests(2);
    const said = model.requests.map((r) => r.messages.filter((m) => m.role === "user").at(-1)?.content ?? "");
    expect(said[0]).toContain("here are my notes");
    expect(said[1]).toContain("now summarise them");
  });

  it("a forwarded message is read from its snapshot; one with only embeds, and a bare mention, are answered", async () => {
    await start();
    const dm = discord.dmChannelOf(OWNER);
    discord.dmWith(OWNER, {
      message_reference: { type: 1, channel_id: "1100000000000000555", message_id: "1100000000000000556" },
      message_snapshots: [
        {
          message: {
            ...{ type: 0, content: "the meeting moved to 3pm", embeds: [], attachments: [], timestamp: new Date().toISOString() },
            ...{ edited_timestamp: null, flags: 0, mentions: [], mention_roles: [] },
          },
        },
      ],
    });
    const answered = await sentIn(dm, 0, (c) => c.body.content === "ok");
    expect(model.requests.at(-1)?.messages.at(-1)?.content).toMatch(/^\[forwarded message\] the meeting moved to 3pm/);
    discord.dmWith(OWNER, { embeds: [{ title: "Build failed", description: "main is red" }] });
    const embeds = await sentIn(dm, discord.calls.indexOf(answered) + 1);
    expect(embeds.body.content).toBe("I can't use embeds yet. Send me text, a voice note, a photo or a file.");
    discord.say(OWNER, "", { mention: true });
    const bare = await sentIn(GUILD_CHANNEL);
    expect(bare.body.content).toMatch(/^Your message has no text I can use/);
    expect(model.requests).toHaveLength(1);
  });

  it("a system message in the DM (a pin notice) is no message to answer", async () => {
    await start();
    const dm = discord.dmChannelOf(OWNER);
    discord.dmWith(OWNER, { type: 6, content: "" }); // "<owner> pinned a message to this channel."
    discord.dm(OWNER, "hello");
    await sentIn(dm, 0, (c) => c.body.content === "ok");
    const sent = discord.calls.filter((c) => c.method === `POST /channels/${dm}/messages`).map((c) => c.body.content);
    expect(sent).toEqual(["ok"]);
  });
});
