import type { Config, SpeechConfig } from "../config/schema.js";
import { imagePlaceholder, imageProblem, saveImage, sniffImage } from "./images.js";
import { formatSize, keepInInbox } from "./inbox.js";
import { createTranscriber, isEmptyTranscript, type Transcriber } from "./speech.js";
import { type Incoming, type Intake, MAX_DOWNLOAD_BYTES } from "./types.js";

const SPEECH_NOT_CONFIGURED = [
  "I cannot listen to voice notes yet: speech-to-text is not set up. Add to hermes.yaml, for example:",
  "speech:\n  base_url: http://127.0.0.1:8000/v1\n  model: Systran/faster-whisper-small",
  "and run a speech server there (docs/media.md lists some), then reload hermes. Or write your message as text.",
].join("\n");

const ECHO_CHARS = 3500;

const transcribers = new WeakMap<SpeechConfig, Transcriber>();

/**
 * What can be said before anything is downloaded: a voice note with no speech set up, one over
 * `speech.max_seconds`, a file over the download limit. Undefined when the file should be fetched.
 */
export function refuseBeforeDownload(config: Config, kind: Incoming["kind"], size?: number, durationS?: number): string | undefined {
  if (kind === "voice" && !config.speech) return SPEECH_NOT_CONFIGURED;
  if (kind === "voice" && config.speech && durationS !== undefined && durationS > config.speech.max_seconds) {
    return `That voice note is ${Math.round(durationS)} s long; I transcribe at most ${config.speech.max_seconds} s (speech.max_seconds). Send a shorter one, or write it.`;
  }
  if (size !== undefined && size > MAX_DOWNLOAD_BYTES) {
    return `That file is ${formatSize(size)}; I can take files up to ${formatSize(MAX_DOWNLOAD_BYTES)} (the Telegram Bot API's download limit).`;
  }
  return undefined;
}

/** Turns a fetched file into the user's message, or into a reply that says why not. Never throws. */
export async function intake(file: Incoming, config: Config, signal?: AbortSignal): Promise<Intake> {
  const refused = refuseBeforeDownload(config, file.kind, file.bytes.length, file.durationS);
  if (refused) return { type: "reply", text: refused };
  try {
    if (file.kind === "voice") return await hear(file, config.speech as SpeechConfig, signal);
    if (file.kind === "image") return await look(file, config);
    return await keep(file, config);
  } catch (err) {
    return { type: "reply", text: `I could not take that file: ${(err as Error).message}` };
  }
}

async function hear(file: Incoming, speech: SpeechConfig, signal?: AbortSignal): Promise<Intake> {
  const transcriber = transcribers.get(speech) ?? createTranscriber(speech);
  transcribers.set(speech, transcriber);
  const heard = await transcriber.transcribe(file.bytes, file.name, file.mime, signal);
  if (!heard.ok) {
    return {
      type: "reply",
      text: `I could not transcribe your voice note: ${heard.message}. Nothing was sent on; send the voice note again once it is fixed.`,
    };
  }
  if (isEmptyTranscript(heard.text))
    return { type: "reply", text: "I heard no words in that voice note (silence or noise); nothing was sent on." };
  const length = file.durationS !== undefined ? `, ${Math.round(file.durationS)} s` : "";
  const caption = file.caption ? `${file.caption}\n` : "";
  // The echo fits one chat message (Telegram: 4096 characters); the model gets the whole transcript.
  const echo = heard.text.length > ECHO_CHARS ? `🎙 ${heard.text.slice(0, ECHO_CHARS)}…` : `🎙 ${heard.text}`;
  return { type: "message", text: `${caption}[voice note${length}, transcribed] ${heard.text}`, echo };
}

async function look(file: Incoming, config: Config): Promise<Intake> {
  const info = sniffImage(file.bytes);
  const problem = imageProblem(info, config.model.max_image_px);
  if (problem || !info) return { type: "reply", text: problem ?? "" };
  const ref = await saveImage(config.storage.path, file.bytes, info);
  const text = [file.caption, imagePlaceholder(info, ref)].filter(Boolean).join("\n");
  return { type: "message", text, images: [ref] };
}

async function keep(file: Incoming, config: Config): Promise<Intake> {
  const note = await keepInInbox(config.tools.files.root, file);
  return { type: "message", text: [file.caption, note].filter(Boolean).join("\n") };
}
