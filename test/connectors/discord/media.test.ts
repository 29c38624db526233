import { beforeEach, describe, expect, it } from "vitest";
import type { DiscordCall, FakeDiscord } from "../../fakes/discord-server.js";
import type { FakeModel } from "../../fakes/model-server.js";
import type { FakeSpeech } from "../../fakes/speech-server.js";
import { useDiscord, useHermes, useModel, useSpeech, waitFor } from "../../helpers/fixture.js";
import { baseSettings } from "../../helpers/hermes.js";
import { OGG, png } from "../../media/images.fixture.js";

const OWNER = "2000000000000000042";
const STRANGER = "2000000000000000007";

describe("media from Discord attachments", () => {
  let model: FakeModel;
  let discord: FakeDiscord;
  let speech: FakeSpeech;
  const start = async () => {
    const hermes = await useHermes({
      ...baseSettings(model.url),
      speech: { base_url: speech.url, model: "Systran/faster-whisper-small" },
      connectors: { cron: { enabled: false }, discord: discord.settings([OWNER]) },
    });
    await hermes.waitForLog((l) => l.msg === "discord gateway ready");
    return hermes;
  };
  const sentIn = (channel: string, predicate: (c: DiscordCall) => boolean = () => true) =>
    discord.waitFor((c) => c.method === `POST /channels/${channel}/messages` && predicate(c));

  beforeEach(async () => {
    [model, discord, speech] = await Promise.all([useModel(), useDiscord(), useSpeech()]);
  });

  it("an audio attachment is transcribed, shown back and answered", async () => {
    speech.transcripts.push("what is on today");
    model.script({ text: "Nothing much." });
    await start();
    discord.dmWithFiles(OWNER, "", [{ name: "voice-message.ogg", contentType: "audio/ogg", bytes: OGG, durationSecs: 2.5 }]);
    const channel = discord.dmChannelOf(OWNER);
    expect((await sentIn(channel)).body.content).toBe("🎙 what is on today");
    await sentIn(channel, (c) => c.body.content === "Nothing much.");
    expect(speech.requests[0]).toMatchObject({ fileName: "voice-message.ogg", fileType: "audio/ogg", responseFormat: "json" });
    expect(model.requests[0]?.messages.at(-1)?.content).toMatch(/^\[voice note, 3 s, transcribed\] what is on today/);
  });

  it("an image attachment reaches a vision model with its caption", async () => {
    model.capabilities["hermes3:8b"] = ["completion", "vision"];
    model.script({ text: "A chart." });
    await start();
    discord.dmWithFiles(OWNER, "what is this", [
      { name: "chart.png", contentType: "image/png", bytes: png(800, 600), width: 800, height: 600 },
    ]);
    await sentIn(discord.dmChannelOf(OWNER), (c) => c.body.content === "A chart.");
    const carried = model.requests[0]?.messages.at(-1);
    expect(carried?.content).toMatch(/^what is this\n\[photo: 800×600 PNG/);
    expect(carried?.images).toEqual([png(800, 600).toString("base64")]);
  });

  it("a file larger than Discord said is read only up to 20 MB, then refused", async () => {
    await start();
    const big = Buffer.alloc(64 * 1024 * 1024, 1);
    discord.dmWithFiles(OWNER, "", [{ name: "dump.bin", contentType: "application/octet-stream", bytes: big, size: 1024 }]);
    const reply = await sentIn(discord.dmChannelOf(OWNER));
    expect(reply.body.content).toMatch(/^That file is over 20 MB/);
    await waitFor(() => discord.attachmentsCutShort.length === 1, { message: "the download cut short at the limit" });
    expect(model.requests).toHaveLength(0);
  });

  it("a sticker gets a short answer, not silence, and nothing reaches the model", async () => {
    await start();
    discord.dmWith(OWNER, { sticker_items: [{ id: "749054660769218631", name: "Wave", format_type: 1 }] });
    const reply = await sentIn(discord.dmChannelOf(OWNER));
    expect(reply.body.content).toBe("I can't use stickers yet. Send me text, a voice note, a photo or a file.");
    expect(model.requests).toHaveLength(0);
  });

  it("a stranger's attachment is never downloaded nor sent anywhere", async () => {
    const h = await start();
    discord.dmWithFiles(STRANGER, "", [{ name: "voice-message.ogg", contentType: "audio/ogg", bytes: OGG, durationSecs: 2 }]);
    await sentIn(discord.dmChannelOf(STRANGER));
    await h.waitForLog((l) => l.msg === "message from a user not in allowed_users ignored");
    expect(discord.attachmentDownloads).toHaveLength(0);
    expect(speech.requests).toHaveLength(0);
    expect(model.requests).toHaveLength(0);
  });
});
