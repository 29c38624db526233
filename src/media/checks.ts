import type { Config } from "../config/schema.js";
import type { ModelClient } from "../model/types.js";
import { visionSummary } from "./vision.js";

export interface MediaCheck {
  /** null: not configured (nothing to check), or for vision: the model's server could not be asked. */
  ok: boolean | null;
  detail: string;
  fix?: string;
}

/** The speech endpoint: reachable, and the model listed where the server lists models. Never throws. */
export async function checkSpeech(config: Config, signal?: AbortSignal): Promise<MediaCheck> {
  const speech = config.speech;
  if (!speech) return { ok: null, detail: "not configured: voice notes are answered with how to set it up" };
  const { createTranscriber } = await import("./speech.js");
  const probe = await createTranscriber(speech).probe(signal ?? AbortSignal.timeout(5000));
  const where = `${speech.base_url} (${speech.model})`;
  if (!probe.reachable)
    return {
      ok: false,
      detail: probe.detail,
      fix: "start the speech server (see docs/media.md), or fix speech.base_url",
    };
  if (probe.modelPresent === false)
    return { ok: false, detail: `${where}: ${probe.detail}`, fix: "set speech.model to a model the server lists, or download it there" };
  return { ok: true, detail: `${where}: ${probe.detail}` };
}

/** Whether photos can be seen: the chat model's vision, or `model.vision_model`'s (null: cannot tell). Never throws. */
export async function checkVision(
  config: Config,
  model: ModelClient,
  visionModel?: ModelClient,
  signal?: AbortSignal,
): Promise<MediaCheck> {
  const summary = await visionSummary(config, model, visionModel, signal ?? AbortSignal.timeout(5000));
  // A server that cannot be asked says nothing of the model's vision: no advice to set vision_model.
  if (summary.ok !== false) return { ok: summary.ok, detail: summary.detail };
  return {
    ok: false,
    detail: summary.detail,
    fix: "set model.vision_model to a vision model (e.g. `ollama pull qwen2.5vl:7b`), or model.vision: true if the model can see",
  };
}
