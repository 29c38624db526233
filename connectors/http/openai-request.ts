/**
 * A chat completions request made into a hermes run: the newest user message is the input; with `user`
 * (or `X-Hermes-Session`) the run is in session `api:<user>` on hermes' own history, else it is an
 * ephemeral run whose context is the request's earlier messages. Images go the media path (SPEC §12).
 */
import type { Context } from "hono";
import type { SubmitRequest } from "../../src/agent/types.js";
import type { Core } from "../../src/connector.js";
import { removeImages } from "../../src/media/images.js";
import { newRunId } from "../../src/run-id.js";
import { chatRequest, contextOf, decodeDataUrl, MODEL_IDS, openAiError, splitRequest, type UserInput } from "./openai-shapes.js";
import { parseJsonBody } from "./respond.js";

const SESSION = /^[\w.@+:-]{1,64}$/;

export interface PreparedRun {
  runId: string;
  /** The model id the client asked for, when hermes offers it; else `hermes`. */
  model: (typeof MODEL_IDS)[number];
  stream: boolean;
  includeUsage: boolean;
  ephemeral: boolean;
  submit: SubmitRequest;
}

export type Prepared = { ok: true; run: PreparedRun } | { ok: false; response: Response };

const refuse = (c: Context, message: string, code = "invalid_request"): Prepared => ({
  ok: false,
  response: openAiError(c, 400, "invalid_request_error", code, message),
});

export async function prepareRun(c: Context, core: Core): Promise<Prepared> {
  const body = parseJsonBody(await c.req.text());
  if (!body.ok) return refuse(c, body.message, "invalid_json");
  const parsed = chatRequest.safeParse(body.value);
  if (!parsed.success) return refuse(c, parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "));
  const req = parsed.data;
  const split = splitRequest(req.messages);
  if (!split || (!split.input.text.trim() && split.input.images.length === 0))
    return refuse(c, "the request has no user message: hermes answers the newest message with role user");
  // An empty `user` (which OpenAI accepts, and some apps send) or header is no session.
  const user = c.req.header("x-hermes-session") || req.user || undefined;
  if (user !== undefined && !SESSION.test(user))
    return refuse(c, 'the session ("user" or X-Hermes-Session) must be 1-64 letters, digits or . _ @ + : -', "invalid_session");
  const images = await intakeImages(split.input, core);
  if (!images.ok) return refuse(c, images.message, "invalid_image");
  const runId = newRunId();
  const model = (MODEL_IDS as readonly string[]).includes(req.model ?? "") ? (req.model as PreparedRun["model"]) : "hermes";
  const submit: SubmitRequest = {
    sessionKey: user ? `api:${user}` : `api:~${runId.slice(4)}`,
    text: images.text,
    source: "api",
    runId,
    ...(images.refs.length ? { images: images.refs } : {}),
    ...(user ? {} : { context: contextOf(split.earlier) }),
  };
  return {
    ok: true,
    run: { runId, model, stream: req.stream === true, includeUsage: req.stream_options?.include_usage === true, ephemeral: !user, submit },
  };
}

/** The message's images, checked and stored as photos from the phone are; the text carries their placeholders. */
async function intakeImages(
  input: UserInput,
  core: Core,
): Promise<{ ok: true; text: string; refs: string[] } | { ok: false; message: string }> {
  if (input.images.length === 0) return { ok: true, text: input.text, refs: [] };
  // Loaded only for a request that brings an image, as for a chat.
  const { intake } = await import("../../src/media/intake.js");
  const texts = [input.text];
  const refs: string[] = [];
  for (const url of input.images) {
    const decoded = decodeDataUrl(url);
    const taken =
      "problem" in decoded
        ? undefined
        : await intake({ kind: "image", bytes: decoded.bytes, name: "image", mime: decoded.mime }, core.config());
    if (!taken || taken.type === "reply") {
      // A refused request keeps none of the images taken before the one refused.
      removeImages(core.config().storage.path, refs);
      return { ok: false, message: taken?.text ?? ("problem" in decoded ? decoded.problem : "") };
    }
    texts.push(taken.text);
    refs.push(...(taken.images ?? []));
  }
  return { ok: true, text: texts.filter(Boolean).join("\n"), refs };
}
