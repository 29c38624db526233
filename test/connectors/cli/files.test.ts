import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createUploads } from "../../../connectors/cli/files.js";
import { MAX_UPLOAD_BYTES } from "../../../connectors/cli/protocol.js";
import { type FakeModel, startFakeModel } from "../../fakes/model-server.js";
import { type FakeSpeech, startFakeSpeech } from "../../fakes/speech-server.js";
import { baseSettings, type Hermes, startHermes } from "../../helpers/hermes.js";
import { OGG, png } from "../../media/images.fixture.js";

describe("hermes ask --audio / --image", () => {
  let model: FakeModel;
  let speech: FakeSpeech;
  let hermes: Hermes | undefined;
  const start = (withSpeech = true) =>
    startHermes({
      ...baseSettings(model.url),
      ...(withSpeech && { speech: { base_url: speech.url, model: "Systran/faster-whisper-small" } }),
    });

  beforeEach(async () => {
    [model, speech] = await Promise.all([startFakeModel(), startFakeSpeech()]);
  });
  afterEach(async () => {
    if (hermes?.process.exitCode === null) await hermes.stop();
    hermes = undefined;
    await Promise.all([model.close(), speech.close()]);
  });

  it("a voice file larger than one socket line is uploaded in pieces, transcribed, shown, and answered", async () => {
    speech.transcripts.push("buy milk");
    model.script({ text: "Noted." });
    hermes = await start();
    const audio = Buffer.concat([OGG, Buffer.alloc(1_500_000, 3)]);
    writeFileSync(join(hermes.dir, "note.ogg"), audio);
    const result = await hermes.cli(["ask", "--audio", "note.ogg"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Noted.\n");
    expect(result.stderr).toContain("🎙 buy milk");
    expect(speech.requests[0]).toMatchObject({ fileName: "note.ogg", fileType: "audio/ogg" });
    expect(speech.requests[0]?.bytes.equals(audio)).toBe(true);
    expect(model.requests[0]?.messages.at(-1)?.content).toMatch(/^\[voice note, transcribed\] buy milk/);
  });

  it("an image reaches a vision model with the text as its caption", async () => {
    model.capabilities["hermes3:8b"] = ["completion", "vision"];
    model.script({ text: "A diagram." });
    hermes = await start();
    writeFileSync(join(hermes.dir, "pic.png"), png(640, 480));
    const result = await hermes.cli(["ask", "what is this", "--image", "pic.png"]);
    expect(result.stdout).toBe("A diagram.\n");
    const carried = model.requests[0]?.messages.at(-1);
    expect(carried?.content).toMatch(/^what is this\n\[photo: 640×480 PNG/);
    expect(carried?.images).toEqual([png(640, 480).toString("base64")]);
  });

  it("without speech configured the answer says how to set it up, exit 1, and no model request", async () => {
    hermes = await start(false);
    writeFileSync(join(hermes.dir, "note.ogg"), OGG);
    const result = await hermes.cli(["ask", "--audio", "note.ogg", "--json"]);
    expect(result.code).toBe(1);
    const last = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}");
    expect(last).toMatchObject({ type: "done", stop_reason: "refused" });
    expect(last.reply).toContain("speech-to-text is not set up");
    expect(model.requests).toHaveLength(0);
  });
});

describe("a connection's uploads", () => {
  const b64 = (text: string) => Buffer.from(text).toString("base64");

  it("never gives a new upload the id of one still kept", () => {
    const uploads = createUploads();
    const a = uploads.add(b64("A"));
    const b = uploads.add(b64("B"));
    expect([a, b]).toMatchObject([{ upload: "u1" }, { upload: "u2" }]);
    expect(uploads.take("u1")?.toString()).toBe("A");
    const c = uploads.add(b64("C"));
    expect(c).toMatchObject({ ok: true, upload: "u3", bytes: 1 });
    expect(uploads.take("u2")?.toString()).toBe("B");
    expect(uploads.take("u3")?.toString()).toBe("C");
  });

  it("counts toward the limit only what it keeps: a taken upload makes room again", () => {
    const uploads = createUploads();
    const big = Buffer.alloc(MAX_UPLOAD_BYTES - 1).toString("base64");
    const first = uploads.add(big);
    expect(first).toMatchObject({ ok: true, bytes: MAX_UPLOAD_BYTES - 1 });
    expect(uploads.add(b64("xy"))).toMatchObject({ ok: false });
    expect(uploads.take(first.ok ? first.upload : "")?.length).toBe(MAX_UPLOAD_BYTES - 1);
    expect(uploads.take("u1")).toBeUndefined();
    expect(uploads.add(big)).toMatchObject({ ok: true, bytes: MAX_UPLOAD_BYTES - 1 });
  });
});
