/**
 * The OpenAI-compatible door (SPEC §21, docs/openai.md): `GET /v1/models` and `POST /v1/chat/completions`,
 * as JSON or as a `chat.completion.chunk` stream. Each request is one hermes run under the same gate;
 * a gated call is asked at `openai.approvals_to` and on the dashboard while the response waits.
 * Mounted before the rest of /v1 so its errors, its own auth included, come in OpenAI's shape.
 */
import type { Context, Next } from "hono";
import { bodyLimit } from "hono/body-limit";
import { streamSSE } from "hono/streaming";
import type { AgentEvent, RunOutcome } from "../../src/agent/types.js";
import type { HttpConfig } from "../../src/config/schema.js";
import type { Core } from "../../src/connector.js";
import { errorMessage, StoppingError } from "../../src/errors.js";
import { removeImages } from "../../src/media/images.js";
import { MAX_DOWNLOAD_BYTES } from "../../src/media/types.js";
import { approvalsTo } from "../cron/scheduled.js";
import { type App, clientOf } from "./api.js";
import { bearerOk, type createFailureLimiter } from "./auth.js";
import { createReplyText, type ReplyText } from "./openai-render.js";
import { type PreparedRun, prepareRun } from "./openai-request.js";
import { type Completion, chunkOf, completionOf, MODEL_IDS, openAiError, type Usage, usageOf } from "./openai-shapes.js";

export interface OpenAiDeps {
  core: Core;
  cfg: () => HttpConfig;
  failures: ReturnType<typeof createFailureLimiter>;
}

/** A stream says it is alive this often while the run works or waits for an approval (proxies close quiet streams). */
const KEEPALIVE_MS = 15_000;

/** A request may carry a photo or two as `data:` URLs (base64: 4/3 of the bytes). */
const MAX_REQUEST_BYTES = Math.ceil((MAX_DOWNLOAD_BYTES * 4) / 3) + 1024 * 1024;

export function mountOpenAi(app: App, d: OpenAiDeps): void {
  const guard = async (c: Context, next: Next) => {
    // The right token always gets in: failures by others never lock it out (as on the rest of /v1).
    if (!bearerOk(c.req.header("authorization"), d.cfg().token)) {
      const who = clientOf(c, d.cfg().trusted_proxies);
      if (d.failures.blocked(who))
        return openAiError(c, 429, "rate_limit_error", "rate_limit_exceeded", "too many failed attempts; wait a minute");
      d.failures.fail(who);
      return openAiError(
        c,
        401,
        "invalid_request_error",
        "invalid_api_key",
        "send hermes' HTTP token as the API key (Authorization: Bearer <token>)",
      );
    }
    if (!d.cfg().openai.enabled)
      return openAiError(c, 404, "not_found_error", "not_found", "the OpenAI-compatible API is off (connectors.http.openai.enabled)");
    return next();
  };
  const limit = bodyLimit({
    maxSize: MAX_REQUEST_BYTES,
    onError: (c) =>
      openAiError(c, 413, "invalid_request_error", "request_too_large", `the request may be at most ${MAX_REQUEST_BYTES} bytes`),
  });
  app.get("/v1/models", guard, (c) =>
    c.json({ object: "list", data: MODEL_IDS.map((id) => ({ id, object: "model", created: 0, owned_by: "hermes" })) }),
  );
  app.get("/v1/models/:id", guard, (c) => {
    const id = c.req.param("id") ?? "";
    if (!(MODEL_IDS as readonly string[]).includes(id))
      return openAiError(c, 404, "invalid_request_error", "model_not_found", `there is no model ${id}`);
    return c.json({ id, object: "model", created: 0, owned_by: "hermes" });
  });
  app.post("/v1/chat/completions", guard, limit, (c) => chat(c, d));
}

/** One request's run, submitted with the approvals routed to `approvals_to`: its events, its outcome, its text and usage. */
interface Answer {
  completion: Completion;
  text: ReplyText;
  /** The run's events from here on, those that came before given first. */
  listen(listener: (e: AgentEvent) => void): void;
  done: Promise<RunOutcome>;
  usage(): Usage;
}

/** The seconds a client is told to wait (Retry-After) when hermes is stopping: a restart is back by then. */
const RETRY_AFTER_S = 5;

async function chat(c: Context, d: OpenAiDeps): Promise<Response> {
  const prepared = await prepareRun(c, d.core);
  if (!prepared.ok) return prepared.response;
  const run = prepared.run;
  const approvalsAt = d.cfg().openai.approvals_to;
  const ask = approvalsAt ? approvalsTo(d.core, approvalsAt) : undefined;
  const heard: AgentEvent[] = [];
  let listener: ((e: AgentEvent) => void) | undefined;
  let submitted: ReturnType<Core["submit"]>;
  try {
    // Submitted before any byte of the answer: a request that comes while hermes stops is not taken, and
    // the client hears 503 (which OpenAI's SDKs retry), not a 200 whose text an app keeps as the answer.
    submitted = d.core.submit({
      ...run.submit,
      recordedOrThrow: true,
      channel: approvalsAt || run.submit.sessionKey,
      listener: (event) => {
        ask?.(event);
        if (listener) listener(event);
        else heard.push(event);
      },
    });
  } catch (err) {
    // Not taken: its images are nobody's.
    removeImages(d.core.config().storage.path, run.submit.images ?? []);
    if (err instanceof StoppingError) {
      c.header("Retry-After", String(RETRY_AFTER_S));
      return openAiError(c, 503, "server_error", "shutting_down", "hermes is stopping or restarting; send the request again in a moment");
    }
    d.core.log.error({ err, connector: "http" }, "a chat completion could not run");
    return openAiError(c, 500, "server_error", "internal_error", errorMessage(err));
  }
  // A client gone before the end stops its run, as OpenAI's API does (an app's Stop button): a session's
  // run too, also one still queued behind another, which would hold up the session's next request. It
  // may have gone already, while its images were being taken in.
  const gone = () => {
    if (c.env.outgoing.writableFinished || !d.core.stopRun(submitted.runId)) return;
    d.core.log.info({ runId: submitted.runId }, "the API client went away before the answer; its run is stopped");
  };
  if (c.env.outgoing.destroyed) gone();
  else c.env.outgoing.once("close", gone);
  const answer: Answer = {
    completion: { id: `chatcmpl-${run.runId.slice(4)}`, created: Math.floor(Date.now() / 1000), model: run.model },
    text: createReplyText({ activity: run.model === "hermes-tools", approvalsTo: approvalsAt }),
    usage: () => usageOf(d.core.store.usage.ofRun(run.runId)),
    listen(l) {
      listener = l;
      for (const event of heard.splice(0)) l(event);
    },
    done: submitted.done.finally(() => forgetImages(d.core, run)),
  };
  // Awaited by the answer; never an unhandled rejection should the response be gone before it listens.
  answer.done.catch(() => undefined);
  return run.stream ? answerStream(c, d, answer, run.includeUsage) : answerJson(c, d, answer);
}

async function answerJson(c: Context, d: OpenAiDeps, a: Answer): Promise<Response> {
  try {
    a.listen((event) => a.text.onEvent(event));
    const outcome = await a.done;
    return c.json(completionOf(a.completion, a.text.whole(outcome.reply), a.usage()));
  } catch (err) {
    d.core.log.error({ err, connector: "http" }, "a chat completion could not run");
    return openAiError(c, 500, "server_error", "internal_error", errorMessage(err));
  }
}

function answerStream(c: Context, d: OpenAiDeps, a: Answer, includeUsage: boolean): Response {
  return streamSSE(c, async (stream) => {
    let chain: Promise<unknown> = Promise.resolve();
    const write = (text: string) => {
      chain = chain.then(() => (stream.aborted ? undefined : stream.write(text))).catch(() => {});
    };
    const send = (data: unknown) => write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
    const delta = (content: string) => content && send(chunkOf(a.completion, { content }));
    const alive = setInterval(() => write(": keep-alive\n\n"), KEEPALIVE_MS);
    send(chunkOf(a.completion, { role: "assistant", content: "" }));
    try {
      a.listen((event) => {
        delta(a.text.onEvent(event));
        if (event.type === "approval_requested") write(`: waiting for approval of ${event.tool}\n\n`);
      });
      const outcome = await a.done;
      delta(a.text.finish(outcome.reply));
      send(chunkOf(a.completion, {}, "stop"));
      if (includeUsage) send(chunkOf(a.completion, {}, null, a.usage()));
    } catch (err) {
      d.core.log.error({ err, connector: "http" }, "a streamed chat completion could not run");
      send({ error: { message: errorMessage(err), type: "server_error", param: null, code: "internal_error" } });
    } finally {
      clearInterval(alive);
    }
    send("[DONE]");
    await chain;
  });
}

/** An ephemeral run's images are not kept either, once it has ended. */
function forgetImages(core: Core, run: PreparedRun): void {
  if (run.ephemeral && run.submit.images) removeImages(core.config().storage.path, run.submit.images);
}
