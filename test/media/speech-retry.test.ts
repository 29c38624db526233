/**
 * A transcription that timed out was sent again by the SDK's own retry while the speech server was still at
 * the first: the server did the work twice and the owner waited twice as long for "did not answer in time".
 */
import { describe, expect, it } from "vitest";
import { createTranscriber } from "../../src/media/speech.js";
import { useSpeech } from "../helpers/fixture.js";
import { OGG } from "./images.fixture.js";

const settings = (url: string, timeout_s: number) => ({
  base_url: url,
  model: "Systran/faster-whisper-small",
  api_key: "",
  language: "",
  max_seconds: 600,
  timeout_s,
});

describe("speech-to-text, when the server is slow or failing", () => {
  it("sends a voice note once when the server does not answer in time", async () => {
    const speech = await useSpeech();
    speech.hang = 2;
    const heard = await createTranscriber(settings(speech.url, 1)).transcribe(OGG, "voice.ogg", "audio/ogg");
    expect(heard).toMatchObject({ ok: false, message: expect.stringMatching(/did not answer in time/) });
    expect(speech.requests).toHaveLength(1);
  });

  it("tries once more when the server was busy (503), not after a gateway gave up (504), and tells of the last one", async () => {
    const speech = await useSpeech();
    speech.failWith = 504;
    const gateway = await createTranscriber(settings(speech.url, 5)).transcribe(OGG, "voice.ogg", "audio/ogg");
    expect(gateway).toMatchObject({ ok: false, message: expect.stringContaining("answered HTTP 504") });
    expect(speech.requests).toHaveLength(1);
    speech.failWith = 503;
    const heard = await createTranscriber(settings(speech.url, 5)).transcribe(OGG, "voice.ogg", "audio/ogg");
    expect(heard).toMatchObject({ ok: false, message: expect.stringContaining("answered HTTP 503") });
    expect(speech.requests).toHaveLength(3);
    speech.failWith = undefined;
    expect(await createTranscriber(settings(speech.url, 5)).transcribe(OGG, "voice.ogg", "audio/ogg")).toEqual({
      ok: true,
      text: "hello from a voice note",
    });
  });
});
