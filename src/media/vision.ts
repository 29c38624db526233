import type { Config } from "../config/schema.js";
import { ollamaShow } from "../model/ollama-show.js";
import type { ChatMessage, ModelClient } from "../model/types.js";
import { loadImages } from "./images.js";

/**
 * Whether an Ollama model can see, from `/api/show` `capabilities` (older servers: a vision projector or a
 * `clip`/`mllama` family). Undefined when the server cannot be asked; never throws.
 */
async function ollamaHasVision(baseUrl: string, name: string, signal?: AbortSignal): Promise<boolean | undefined> {
  const body = await ollamaShow(baseUrl, name, signal ?? AbortSignal.timeout(5000));
  if (!body) return undefined;
  return body.capabilities
    ? body.capabilities.includes("vision")
    : Boolean(body.projector_info) || (body.details?.families ?? []).some((f) => /clip|mllama/i.test(f));
}

/** Whether this client's model can see: `model.vision` when set, else Ollama's answer; an OpenAI-compatible endpoint cannot be asked and is assumed to. */
export async function hasVision(
  client: ModelClient,
  setting: Config["model"]["vision"],
  signal?: AbortSignal,
): Promise<boolean | undefined> {
  if (setting !== "auto") return setting;
  if (client.provider !== "ollama") return true;
  return ollamaHasVision(client.baseUrl, client.modelName, signal);
}

export type ImageTurn = { ok: true; model: ModelClient; messages: ChatMessage[] } | { ok: false; reply: string };

/** The pictures of a run's image list, read and encoded once: every step of the run sends the same ones. */
const loaded = new WeakMap<string[], Promise<string[]>>();

/**
 * The request of a turn that brought images: the model that sees (`model.vision_model` when set), and the
 * prompt with the images on the turn's message. Later turns send only that message's placeholder text.
 * A model that cannot see gets no request at all; the user is told what to set.
 */
export async function prepareImageTurn(
  prompt: ChatMessage[],
  files: string[],
  o: { config: Config; model: ModelClient; visionModel?: ModelClient; signal?: AbortSignal },
): Promise<ImageTurn> {
  const model = o.visionModel ?? o.model;
  const sees = o.visionModel ? true : await hasVision(model, o.config.model.vision, o.signal);
  if (sees === false) {
    return {
      ok: false,
      reply: `The model ${model.modelName} cannot see images, so I did not send it your photo. Set model.vision_model in hermes.yaml to a model that can (for example \`ollama pull qwen2.5vl:7b\`, then vision_model: qwen2.5vl:7b); it is used only for messages with images. If ${model.modelName} can see after all, set model.vision: true.`,
    };
  }
  let pending = loaded.get(files);
  if (!pending) {
    pending = loadImages(o.config.storage.path, files);
    loaded.set(files, pending);
  }
  const images = await pending;
  const at = prompt.findLastIndex((m) => m.role === "user");
  const current = prompt[at];
  if (current?.role !== "user" || images.length === 0) return { ok: true, model, messages: prompt };
  const messages = prompt.slice();
  messages[at] = { ...current, images };
  return { ok: true, model, messages };
}

/** `hermes doctor` / `status`: the vision of the model that would see a photo, in words; `ok` null when the server could not be asked. */
export async function visionSummary(
  config: Config,
  model: ModelClient,
  visionModel?: ModelClient,
  signal?: AbortSignal,
): Promise<{ ok: boolean | null; detail: string }> {
  const target = visionModel ?? model;
  const sees = await hasVision(target, visionModel ? "auto" : config.model.vision, signal);
  const which = visionModel ? `vision_model ${target.modelName}` : `model ${target.modelName}`;
  if (sees === true) return { ok: true, detail: `${which} can see images` };
  if (sees === false)
    return { ok: false, detail: `${which} cannot see images: photos are answered with a note; set model.vision_model to a vision model` };
  return { ok: null, detail: `could not ask ${target.baseUrl} whether ${which} can see images` };
}
