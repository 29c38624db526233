import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import type { FakeSpeech } from "../../fakes/speech-server.js";
import type { Call, FakeTelegram } from "../../fakes/telegram-server.js";
import { useHermes, useModel, useSpeech, useTelegram } from "../../helpers/fixture.js";
import { baseSettings, type Hermes, readDb } from "../../helpers/hermes.js";
import { jpeg, OGG } from "../../media/images.fixture.js";

const OWNER = 42;
const STRANGER = 7;

describe("media from the phone, over Telegram", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  let speech: FakeSpeech;
  let hermes: Hermes | undefined;
  const start = async (o: { speech?: boolean; model?: Record<string, unknown>; extra?: Record<string, unknown> } = {}) => {
    const base = baseSettings(model.url);
    hermes = await useHermes({
      ...base,
      model: { ...(base.model as object), ...o.model },
      ...(o.speech !== false && { speech: { base_url: speech.url, model: "Systran/faster-whisper-small", max_seconds: 60 } }),
      connectors: { cron: { enabled: false }, telegram: telegram.settings([OWNER]) },
      ...o.extra,
    });
    await telegram.waitFor((c) => c.method === "getUpdates");
    return hermes;
  };
  const sentTo = (chat: number, predicate: (c: Call) => boolean = () => true) =>
    telegram.waitFor((c) => c.method === "sendMessage" && Number(c.params.chat_id) === chat && predicate(c));
  const voice = (duration = 3) => ({
    voice: { file_id: telegram.addFile(OGG, "voice.oga"), file_unique_id: "v", duration, mime_type: "audio/ogg", file_size: OGG.length },
  });
  const photo = (caption?: string) => {
    const small = telegram.addFile(jpeg(320, 240), "small.jpg");
    const large = telegram.addFile(jpeg(1280, 960), "large.jpg");
    const huge = telegram.addFile(jpeg(2560, 1920), "huge.jpg");
    const sizes = [
      { file_id: small, file_unique_id: "s", width: 320, height: 240, file_size: 100 },
      { file_id: large, file_unique_id: "l", width: 1280, height: 960, file_size: 200 },
      { file_id: huge, file_unique_id: "h", width: 2560, height: 1920, file_size: 300 },
    ];
    return { photo: sizes, ...(caption && { caption }) };
  };

  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
    speech = await useSpeech();
  });

  it("a voice note is transcribed, shown back, and reaches the model as text with a marker", async () => {
    speech.transcripts.push("remind me to call mum at six");
    model.script({ text: "Will do." });
    await start();
    telegram.sendMessage(OWNER, voice(4));
    const echo = await sentTo(OWNER, (c) => c.params.text.startsWith("🎙"));
    expect(echo.params.text).toBe("🎙 remind me to call mum at six");
    await sentTo(OWNER, (c) => c.params.text === "Will do.");
    expect(speech.requests).toHaveLength(1);
    expect(speech.requests[0]).toMatchObject({
      fileName: "voice.ogg",
      fileType: "audio/ogg",
      model: "Systran/faster-whisper-small",
      responseFormat: "json",
    });
    expect(speech.requests[0]?.bytes.equals(OGG)).toBe(true);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.messages.at(-1)?.content).toMatch(/^\[voice note, 4 s, transcribed\] remind me to call mum at six/);
    const echoIndex = telegram.calls.indexOf(echo);
    const replyIndex = telegram.calls.findIndex((c) => c.method === "sendMessage" && c.params.text === "Will do.");
    expect(echoIndex).toBeLessThan(replyIndex);
  });

  it("audio files and video notes are transcribed under their own names and types", async () => {
    speech.transcripts.push("first", "second");
    await start();
    const audio = {
      file_id: telegram.addFile(OGG, "a.mp3"),
      file_unique_id: "a",
      duration: 9,
      file_name: "memo.mp3",
      mime_type: "audio/mpeg",
    };
    telegram.sendMessage(OWNER, { audio });
    await sentTo(OWNER, (c) => c.params.text === "🎙 first");
    telegram.sendMessage(OWNER, { video_note: { file_id: telegram.addFile(OGG, "v.mp4"), file_unique_id: "v", length: 240, duration: 5 } });
    await sentTo(OWNER, (c) => c.params.text === "🎙 second");
    expect(speech.requests.map((r) => [r.fileName, r.fileType])).toEqual([
      ["memo.mp3", "audio/mpeg"],
      ["video-note.mp4", "video/mp4"],
    ]);
  });

  it("in a group, a photo counts only when its caption mentions the bot", async () => {
    model.capabilities["hermes3:8b"] = ["completion", "vision"];
    model.script({ text: "A dog." });
    await start();
    telegram.sendMessage(OWNER, photo("just sharing"), { chatId: -100, chatType: "group" });
    telegram.sendMessage(OWNER, photo("@hermes_test_bot2 is that yours?"), { chatId: -100, chatType: "group" });
    telegram.sendMessage(OWNER, photo("@hermes_test_bot what breed?"), { chatId: -100, chatType: "group" });
    await sentTo(-100, (c) => c.params.text === "A dog.");
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.messages.at(-1)?.content).toMatch(/^user42: what breed\?\n\[photo:/);
    expect(telegram.calls.filter((c) => c.method === "getFile")).toHaveLength(1);
  });

  it("in a forum topic, the typing indicator while a photo is fetched is shown in that topic", async () => {
    model.capabilities["hermes3:8b"] = ["completion", "vision"];
    model.script({ text: "A cat." });
    await start();
    const inTopic = { is_topic_message: true, message_thread_id: 77 };
    telegram.sendMessage(OWNER, { ...photo("@hermes_test_bot what breed?"), ...inTopic }, { chatId: -1001, chatType: "supergroup" });
    await sentTo(-1001, (c) => c.params.text === "A cat.");
    const typing = telegram.calls.filter((c) => c.method === "sendChatAction");
    expect(typing.length).toBeGreaterThan(0);
    expect(typing.map((c) => c.params.message_thread_id)).toEqual(typing.map(() => 77));
  });

  it("the echo of a long transcript fits one Telegram message; the model gets all of it", async () => {
    const long = "word ".repeat(2000).trim();
    speech.transcripts.push(long);
    await start();
    telegram.sendMessage(OWNER, voice(50));
    const echo = await sentTo(OWNER, (c) => c.params.text.startsWith("🎙"));
    expect(echo.params.text.length).toBeLessThan(4096);
    expect(echo.params.text.endsWith("…")).toBe(true);
    await model.waitForRequests(1);
    expect(model.requests[0]?.messages.at(-1)?.content).toContain(long);
  });

  it("without speech configured, a voice note gets a reply saying how to set it up, and nothing else happens", async () => {
    await start({ speech: false });
    telegram.sendMessage(OWNER, voice());
    const reply = await sentTo(OWNER);
    expect(reply.params.text).toContain("speech-to-text is not set up");
    expect(reply.params.text).toContain("speech:\n  base_url:");
    expect(telegram.downloads).toHaveLength(0);
    expect(model.requests).toHaveLength(0);
  });

  it("with the speech endpoint down, the owner is told plainly; the same voice note sent again goes through", async () => {
    speech.failWith = 503;
    await start();
    telegram.sendMessage(OWNER, voice());
    const reply = await sentTo(OWNER);
    expect(reply.params.text).toMatch(/^I could not transcribe your voice note: .*503.*send the voice note again/s);
    expect(model.requests).toHaveLength(0);
    speech.failWith = undefined;
    telegram.sendMessage(OWNER, voice());
    await sentTo(OWNER, (c) => c.params.text === "🎙 hello from a voice note");
    await model.waitForRequests(1);
    expect(model.requests[0]?.messages.at(-1)?.content).toContain("hello from a voice note");
  });

  it("a voice note whose transcription a crash cut off is transcribed and answered after the restart", async () => {
    speech.hang = 1;
    model.script({ text: "Got it." });
    const h = await start();
    telegram.sendMessage(OWNER, voice());
    await speech.waitForRequests(1);
    await h.kill();
    hermes = await h.restart();
    await sentTo(OWNER, (c) => c.params.text === "Got it.");
    expect(speech.requests).toHaveLength(2);
    expect(telegram.messagesTo(OWNER).map((c) => c.params.text)).toEqual(["🎙 hello from a voice note", "Got it."]);
    expect(model.requests).toHaveLength(1);
  });

  it("an empty transcript and a too-long voice note are each answered, not sent to the model", async () => {
    speech.transcripts.push(" [BLANK_AUDIO] ");
    await start();
    telegram.sendMessage(OWNER, voice());
    expect((await sentTo(OWNER)).params.text).toContain("I heard no words");
    telegram.sendMessage(OWNER, voice(3600));
    expect((await sentTo(OWNER, (c) => c.params.text.includes("3600 s"))).params.text).toContain("speech.max_seconds");
    expect(speech.requests).toHaveLength(1);
    expect(model.requests).toHaveLength(0);
  });

  it("a stranger's voice note and photo reach neither the speech endpoint nor the model", async () => {
    model.capabilities["hermes3:8b"] = ["completion", "vision"];
    const h = await start();
    telegram.sendMessage(STRANGER, voice());
    telegram.sendMessage(STRANGER, photo("look"));
    await sentTo(STRANGER);
    await h.waitForLog(() => h.logs.filter((l) => l.msg === "message from a user not in allowed_users ignored").length === 2);
    expect(telegram.calls.filter((c) => c.method === "getFile")).toHaveLength(0);
    expect(telegram.downloads).toHaveLength(0);
    expect(speech.requests).toHaveLength(0);
    expect(model.requests).toHaveLength(0);
  });

  it("a photo with a caption reaches a vision model once, in the size that fits; later requests carry a placeholder", async () => {
    model.capabilities["hermes3:8b"] = ["completion", "vision", "tools"];
    model.script({ text: "A cat on a sofa." }, { text: "Yes, orange." });
    const h = await start();
    telegram.sendMessage(OWNER, photo("what is this?"));
    await sentTo(OWNER, (c) => c.params.text === "A cat on a sofa.");
    telegram.sendText(OWNER, "is it orange?");
    await sentTo(OWNER, (c) => c.params.text === "Yes, orange.");
    const [first, second] = model.requests;
    const carried = first?.messages.at(-1);
    expect(carried?.content).toMatch(/^what is this\?\n\[photo: 1280×960 JPG, stored as media\/[\d-]+\/\w+\.jpg\]/);
    expect(carried?.images).toEqual([jpeg(1280, 960).toString("base64")]);
    const earlier = second?.messages.find((m) => m.role === "user");
    expect(earlier?.content).toBe(carried?.content);
    expect(earlier?.images).toBeUndefined();
    expect(second?.messages.filter((m) => m.images)).toHaveLength(0);
    expect(telegram.downloads.some((p) => p.includes("large.jpg"))).toBe(true);
    const ref = /stored as (media\/\S+\.jpg)/.exec(carried?.content ?? "")?.[1] as string;
    expect(readFileSync(join(h.dir, "data", ref)).equals(jpeg(1280, 960))).toBe(true);
    const stored = readDb(h.dbPath, (db) => db.prepare("SELECT images FROM messages WHERE role = 'user' ORDER BY id").all()) as {
      images: string | null;
    }[];
    expect(stored.map((r) => r.images)).toEqual([JSON.stringify([ref]), null]);
  });

  it("a model without vision gets no image, and the owner is told what to set", async () => {
    await start();
    telegram.sendMessage(OWNER, photo("what is this?"));
    const reply = await sentTo(OWNER);
    expect(reply.params.text).toContain("cannot see images");
    expect(reply.params.text).toContain("model.vision_model");
    expect(model.shown).toEqual(["hermes3:8b"]);
    expect(model.requests).toHaveLength(0);
  });

  it("model.vision_model answers the image turn only; the chat model the rest", async () => {
    model.models.push("qwen2.5vl:7b");
    model.respond((req) => ({ text: `from ${String(req.body.model)}` }));
    await start({ model: { vision_model: "qwen2.5vl:7b" } });
    telegram.sendMessage(OWNER, photo());
    await sentTo(OWNER, (c) => c.params.text === "from qwen2.5vl:7b");
    telegram.sendText(OWNER, "thanks");
    await sentTo(OWNER, (c) => c.params.text === "from hermes3:8b");
    expect(model.requests.map((r) => [r.body.model, r.messages.some((m) => m.images)])).toEqual([
      ["qwen2.5vl:7b", true],
      ["hermes3:8b", false],
    ]);
  });

  it("a PDF and a text file land in the inbox, and the model is told where, how big and what type", async () => {
    const pdf = Buffer.concat([Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "latin1"), Buffer.alloc(100, 0)]);
    const text = Buffer.from("milk\neggs\n");
    const h = await start();
    const doc = (bytes: Buffer, file_name: string, mime_type: string) => ({
      document: { file_id: telegram.addFile(bytes, file_name), file_unique_id: file_name, file_name, mime_type, file_size: bytes.length },
    });
    telegram.sendMessage(OWNER, { ...doc(pdf, "invoice.pdf", "application/pdf"), caption: "file this" });
    await model.waitForRequests(1);
    telegram.sendMessage(OWNER, doc(text, "list.txt", "text/plain"));
    telegram.sendMessage(OWNER, doc(text, "list.txt", "text/plain"));
    await model.waitForRequests(3);
    const told = model.requests.map((r) => r.messages.at(-1)?.content ?? "");
    expect(told[0]).toMatch(
      /^file this\n\[file received: saved as inbox\/invoice\.pdf .*\(115 bytes, application\/pdf\); it is not a text file/,
    );
    expect(told[1]).toMatch(/saved as inbox\/list\.txt .*\(10 bytes, text\/plain\); read_file can open it/);
    expect(told[2]).toContain("saved as inbox/list-2.txt");
    const inbox = join(h.dir, "data/files/inbox");
    expect(readdirSync(inbox).sort()).toEqual(["invoice.pdf", "list-2.txt", "list.txt"]);
    expect(readFileSync(join(inbox, "invoice.pdf")).equals(pdf)).toBe(true);
  });

  it("a file over the Bot API's 20 MB download limit is refused before anything is fetched", async () => {
    await start();
    const big = {
      file_id: "big",
      file_unique_id: "big",
      file_name: "film.mkv",
      mime_type: "video/x-matroska",
      file_size: 25 * 1024 * 1024,
    };
    telegram.sendMessage(OWNER, { document: big });
    expect((await sentTo(OWNER)).params.text).toBe(
      "That file is 25.0 MB; I can take files up to 20.0 MB (the Telegram Bot API's download limit).",
    );
    expect(telegram.calls.filter((c) => c.method.startsWith("getFile"))).toHaveLength(0);
    expect(model.requests).toHaveLength(0);
  });

  it("a file whose message gave no size is refused by getFile's size, before the download", async () => {
    await start();
    const fileId = telegram.addFile(Buffer.alloc(21 * 1024 * 1024), "scan.pdf");
    telegram.sendMessage(OWNER, {
      document: { file_id: fileId, file_unique_id: "scan", file_name: "scan.pdf", mime_type: "application/pdf" },
    });
    expect((await sentTo(OWNER)).params.text).toBe(
      "That file is 21.0 MB; I can take files up to 20.0 MB (the Telegram Bot API's download limit).",
    );
    expect(telegram.downloads).toEqual([]);
    expect(model.requests).toHaveLength(0);
  });

  it("stickers, locations and polls get a short answer, never silence", async () => {
    await start();
    telegram.sendMessage(OWNER, {
      sticker: { file_id: "st", file_unique_id: "st", type: "regular", width: 512, height: 512, is_animated: false, is_video: false },
    });
    expect((await sentTo(OWNER)).params.text).toBe("I can't use stickers yet. Send me text, a voice note, a photo or a file.");
    telegram.sendMessage(OWNER, { location: { latitude: 52.5, longitude: 13.4 } });
    await sentTo(OWNER, (c) => c.params.text.includes("locations"));
    expect(model.requests).toHaveLength(0);
    expect(existsSync(join(hermes?.dir ?? "", "data/files/inbox"))).toBe(false);
  });
});
