import OpenAI, { toFile } from "openai";
import type { SpeechConfig } from "../config/schema.js";
import { maskUrl } from "../url-secrets.js";
import type { Transcript } from "./types.js";

/** Hallucinations whisper prints for silence or noise, and bracketed non-speech tags ("[BLANK_AUDIO]", "(music)"). */
const NON_SPEECH = /\[[^\]]*\]|\([^)]*\)|\*[^*]*\*|[\p{P}\p{S}\s]/gu;

/**
 * Speech-to-text through any OpenAI-compatible POST /audio/transcriptions (speaches, whisper.cpp's
 * server, LocalAI, Groq, OpenAI), via the openai SDK: multipart `file` (its name and type), `model`,
 * `language` when set, `response_format=json`. Never throws.
 */
export function createTranscriber(cfg: SpeechConfig) {
  const base = cfg.base_url.replace(/\/+$/, "");
  const sdk = new OpenAI({ baseURL: base, apiKey: cfg.api_key || "none", maxRetries: 1, timeout: cfg.timeout_s * 1000, logLevel: "off" });

  /**
   * One more try when the server did no work (see worthAnotherTry), never after a timeout: the server may
   * still be at the first (a long note on a CPU whisper), and the owner would wait twice as long for the same
   * "did not answer in time".
   */
  async function transcribe(bytes: Buffer, name: string, mime: string, signal?: AbortSignal): Promise<Transcript> {
    for (let attempt = 1; ; attempt++) {
      try {
        const file = await toFile(bytes, name, { type: mime || "application/octet-stream" });
        const result = await sdk.audio.transcriptions.create(
          { file, model: cfg.model, response_format: "json", ...(cfg.language && { language: cfg.language }) },
          { signal, maxRetries: 0 },
        );
        return { ok: true, text: (result.text ?? "").trim() };
      } catch (err) {
        if (attempt === 1 && worthAnotherTry(err) && !signal?.aborted) {
          await new Promise((r) => setTimeout(r, RETRY_AFTER_MS));
          continue;
        }
        return { ok: false, message: speechError(err, base) };
      }
    }
  }

  /** Reachable, and whether the model is listed (servers without GET /models cannot tell). */
  async function probe(signal?: AbortSignal): Promise<{ reachable: boolean; modelPresent?: boolean; detail: string }> {
    try {
      const page = await sdk.models.list({ signal: signal ?? AbortSignal.timeout(5000) });
      const present = page.data.some((m) => m.id === cfg.model);
      return {
        reachable: true,
        modelPresent: present,
        detail: present ? `model ${cfg.model} is available` : `model ${cfg.model} is not listed by ${base}`,
      };
    } catch (err) {
      if (err instanceof OpenAI.APIError && typeof err.status === "number")
        return { reachable: true, detail: `reachable (GET /models answered ${err.status})` };
      return { reachable: false, detail: speechError(err, base) };
    }
  }

  return { transcribe, probe, baseUrl: base };
}

export type Transcriber = ReturnType<typeof createTranscriber>;

/** True when a transcript holds no words: empty, or only punctuation and non-speech tags. */
export function isEmptyTranscript(text: string): boolean {
  return text.replace(NON_SPEECH, "").length === 0;
}

/** The pause before the one retry of a transcription. */
const RETRY_AFTER_MS = 500;

/**
 * A failure after which the server did no work: no connection made (refused), busy (503) or rate-limited
 * (429). Not a timeout, a connection cut after the upload, or a gateway's 502/504: the server may still be
 * at the first.
 */
function worthAnotherTry(err: unknown): boolean {
  if (err instanceof OpenAI.APIConnectionTimeoutError || err instanceof OpenAI.APIUserAbortError) return false;
  if (err instanceof OpenAI.APIConnectionError) return (err as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED";
  return err instanceof OpenAI.APIError && (err.status === 429 || err.status === 503);
}

function speechError(err: unknown, url: string): string {
  const base = maskUrl(url);
  if (err instanceof OpenAI.APIConnectionTimeoutError) return `the speech endpoint ${base} did not answer in time`;
  if (err instanceof OpenAI.APIUserAbortError) return "the transcription was cancelled";
  if (err instanceof OpenAI.APIError && typeof err.status === "number") {
    const detail = (err.message || "").slice(0, 200);
    if (err.status === 404)
      return `the speech endpoint ${base} has no POST /audio/transcriptions (HTTP 404: ${detail}); check speech.base_url`;
    return `the speech endpoint ${base} answered HTTP ${err.status}: ${detail}`;
  }
  const cause = (err as { cause?: { code?: string } }).cause;
  const code = cause?.code ?? (err as { code?: string }).code;
  return `the speech endpoint ${base} is unreachable${code ? ` (${code})` : ""}: start the speech server or fix speech.base_url`;
}
