/**
 * The OpenAI chat API's shapes as hermes reads and answers them: the request (only what hermes uses;
 * sampling settings and the like are accepted and ignored), the completion, its stream chunks, errors.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "../../src/config/zod.js";
import type { ChatMessage } from "../../src/model/types.js";

/** The model ids `GET /v1/models` lists; `hermes-tools` adds tool activity lines to the reply (docs/openai.md). */
export const MODEL_IDS = ["hermes", "hermes-tools"] as const;

const part = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  image_url: z.union([z.string(), z.looseObject({ url: z.string() })]).optional(),
});

const message = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(part), z.null()]).optional(),
});

export const chatRequest = z.looseObject({
  model: z.string().optional(),
  messages: z.array(message).min(1, "messages must hold at least one message"),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  user: z.string().nullish(),
  /** One run answers one choice: a client asking for more would read choices that are not there. */
  n: z.literal(1, "hermes answers one choice: n must be 1").nullish(),
});

export type ChatRequest = z.output<typeof chatRequest>;
type RequestMessage = ChatRequest["messages"][number];

/** The newest user message: its text and the `data:` URLs of its images. */
export interface UserInput {
  text: string;
  images: string[];
}

/** The newest user message of a request and what came before it; undefined when there is none. */
export function splitRequest(messages: RequestMessage[]): { input: UserInput; earlier: RequestMessage[] } | undefined {
  const at = messages.findLastIndex((m) => m.role === "user");
  const newest = messages[at];
  if (!newest) return undefined;
  return { input: { text: textOf(newest), images: imageUrls(newest) }, earlier: messages.slice(0, at) };
}

/**
 * The messages before the newest user message as hermes' history for an ephemeral run. The app's own
 * system prompt becomes a user message that says so (hermes keeps its own system prompt first); tool
 * turns of the client's own tools are left out; an earlier image is named, not sent again.
 */
export function contextOf(earlier: RequestMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of earlier) {
    const text = textOf(m);
    const images = imageUrls(m).length;
    const noted = images ? `${text}\n[${images} image(s) sent earlier, not shown again]`.trim() : text;
    if (!noted) continue;
    if (m.role === "system" || m.role === "developer")
      out.push({ role: "user", content: `[Instructions from the app I am used through]\n${noted}` });
    else if (m.role === "user") out.push({ role: "user", content: noted });
    else if (m.role === "assistant") out.push({ role: "assistant", content: noted });
  }
  return out;
}

function textOf(m: RequestMessage): string {
  if (typeof m.content === "string") return m.content;
  return (m.content ?? [])
    .filter((p) => p.type === "text" && typeof p.text === "string")
    .map((p) => p.text)
    .join("\n");
}

function imageUrls(m: RequestMessage): string[] {
  if (!Array.isArray(m.content)) return [];
  return m.content.flatMap((p) => {
    if (p.type !== "image_url" || p.image_url === undefined) return [];
    return [typeof p.image_url === "string" ? p.image_url : p.image_url.url];
  });
}

const UNREADABLE = { problem: "an image_url's data: URL could not be read (its %-encoding is broken)" };

/** A `data:` URL's bytes and type, or why there are none (hermes fetches no image from the web). */
export function decodeDataUrl(url: string): { bytes: Buffer; mime: string } | { problem: string } {
  const match = /^data:([\w.+-]+\/[\w.+-]+)?(?:;[\w=.-]+)*?(;base64)?,/i.exec(url);
  if (!match)
    return /^data:/i.test(url) ? UNREADABLE : { problem: "an image_url must be a data: URL (hermes fetches no image from the web)" };
  const body = url.slice(match[0].length);
  if (match[2]) return { bytes: Buffer.from(body, "base64"), mime: match[1] ?? "" };
  try {
    return { bytes: Buffer.from(decodeURIComponent(body), "latin1"), mime: match[1] ?? "" };
  } catch {
    return UNREADABLE;
  }
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Tokens of a run from the usage ledger rows (`model_calls`) of its model calls. */
export function usageOf(rows: Record<string, unknown>[]): Usage {
  let prompt = 0;
  let output = 0;
  for (const r of rows) {
    prompt += Number(r.prompt_tokens ?? 0);
    output += Number(r.output_tokens ?? 0);
  }
  return { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output };
}

/** What every answer of one request shares: its id, time and model. */
export interface Completion {
  id: string;
  created: number;
  model: string;
}

export function completionOf(c: Completion, content: string, usage: Usage) {
  return {
    ...c,
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, logprobs: null, finish_reason: "stop" }],
    usage,
  };
}

/** One `chat.completion.chunk`: a content delta, the first (role) or last (finish) chunk, or the usage chunk. */
export function chunkOf(c: Completion, delta: { role?: "assistant"; content?: string }, finish: "stop" | null = null, usage?: Usage) {
  const choices = usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }];
  return { ...c, object: "chat.completion.chunk", choices, ...(usage ? { usage } : {}) };
}

export type ErrorType = "invalid_request_error" | "authentication_error" | "rate_limit_error" | "not_found_error" | "server_error";

/** An error as OpenAI sends it: `{"error":{"message","type","param","code"}}`. */
export function openAiError(c: Context, status: ContentfulStatusCode, type: ErrorType, code: string, message: string): Response {
  return c.json({ error: { message, type, param: null, code } }, status);
}
