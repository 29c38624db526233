import { errorMessage, ModelError } from "../errors.js";

/** An answer from a server that is up but not serving now (5xx, or 429 "too many requests"): worth asking again. */
export function serverBusy(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * A ModelError for an HTTP answer that was not 2xx. 429 and 5xx are worth retrying; a 400 that says the
 * prompt did not fit the model's context is `context_exceeded` (one smaller request may succeed).
 */
export function httpError(status: number, body: string, where: string, retryAfterMs?: number): ModelError {
  const detail = extractErrorText(body);
  const kind = status === 400 && contextExceeded(body) ? "context_exceeded" : "http";
  return new ModelError(kind, `the model endpoint ${where} answered HTTP ${status}${detail ? `: ${detail}` : ""}`, {
    status,
    retryable: serverBusy(status),
    retryAfterMs,
  });
}

function extractErrorText(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: string | { message?: string } };
    if (typeof parsed.error === "string") return parsed.error;
    if (parsed.error?.message) return parsed.error.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return body.trim().slice(0, 300);
}

/**
 * Turns a failure of a request into a ModelError; connection refused/reset is retryable. A failure without
 * a system error code (ECONNREFUSED, ETIMEDOUT …) was not the network's: what the endpoint sent could not
 * be read as an answer (a JSON syntax error, a value of the wrong shape), and the error says so.
 */
export function networkError(err: unknown, where: string, signal: AbortSignal | undefined, timedOut: () => boolean): ModelError {
  if (err instanceof ModelError) return err;
  if (timedOut()) return new ModelError("timeout", `the model endpoint ${where} did not answer in time`);
  if (signal?.aborted) return new ModelError("aborted", "the request was cancelled");
  // A signal of the request's own (a probe's AbortSignal.timeout) gave up on it.
  const name = (err as { name?: unknown } | null | undefined)?.name;
  if (name === "AbortError" || name === "TimeoutError")
    return new ModelError("timeout", `the model endpoint ${where} did not answer in time`);
  const code = causeCode(err);
  if (code === undefined)
    return badAnswer(where, err instanceof SyntaxError ? `text that is not JSON (${err.message})` : errorMessage(err));
  if (
    code === "ECONNREFUSED" ||
    code === "ECONNRESET" ||
    code === "EPIPE" ||
    code === "UND_ERR_SOCKET" ||
    code === "ENOTFOUND" ||
    code === "EAI_AGAIN"
  ) {
    const kind = code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN" ? "unreachable" : "http";
    return new ModelError(kind, `the model endpoint ${where} is unreachable (${code})`, { retryable: true });
  }
  const tls = code ? TLS_CERTIFICATE[code] : undefined;
  if (tls) return new ModelError("unreachable", `the model endpoint ${where} ${tls.what} (${errorMessage(err)})`, { fix: tls.fix });
  return new ModelError("unreachable", `the model endpoint ${where} failed: ${errorMessage(err)}`, { retryable: false });
}

/** The endpoint answered, but with something that is not a valid answer: `what` says what, briefly. */
export function badAnswer(where: string, what: string): ModelError {
  return new ModelError("bad_response", `the model endpoint ${where} sent something that is not a valid answer: ${what}`);
}

/** An object (not null, not a list), as a JSON object parses. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Message text as sent: text, or nothing (null or absent); anything else is not a valid answer. */
export function checkedContent(content: unknown, where: string): string {
  if (content === undefined || content === null) return "";
  if (typeof content !== "string") throw badAnswer(where, `message content that is not text: ${sample(content)}`);
  return content;
}

/** Tool calls as sent: a list of objects, or nothing; anything else is not a valid answer. */
export function checkedCalls<T>(calls: T[] | null | undefined, where: string): T[] {
  if (calls === undefined || calls === null) return [];
  if (!Array.isArray(calls) || !calls.every(isObject)) throw badAnswer(where, `tool_calls that are not a list of calls: ${sample(calls)}`);
  return calls;
}

/** A value the endpoint sent, as a short piece of text for an error message. */
export function sample(value: unknown): string {
  const text = (typeof value === "string" ? value : JSON.stringify(value)) ?? String(value);
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 120 ? `${flat.slice(0, 120)}…` : flat;
}

const UNTRUSTED = {
  what: "has a TLS certificate this machine does not trust",
  fix: "Give Node the certificate of its CA with NODE_EXTRA_CA_CERTS (in hermes.env), or use http:// for an endpoint on this machine",
};

/** What is wrong with an https endpoint's certificate, by Node's error code, and what fixes it. */
const TLS_CERTIFICATE: Record<string, { what: string; fix: string } | undefined> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: UNTRUSTED,
  SELF_SIGNED_CERT_IN_CHAIN: UNTRUSTED,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: UNTRUSTED,
  UNABLE_TO_GET_ISSUER_CERT: UNTRUSTED,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: UNTRUSTED,
  CERT_UNTRUSTED: UNTRUSTED,
  CERT_HAS_EXPIRED: { what: "has an expired TLS certificate", fix: "Renew the endpoint's certificate" },
  ERR_TLS_CERT_ALTNAME_INVALID: {
    what: "has a TLS certificate for another name",
    fix: "Use a name in model.base_url that the certificate was issued for",
  },
};

function causeCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Parses a Retry-After header (seconds or HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The first byte of an answer did not come in time: the endpoint is taken as down for this call. */
export function firstByteError(where: string, seconds: number): ModelError {
  return new ModelError("timeout", `the model endpoint ${where} sent nothing within ${seconds} s (model.first_byte_timeout_s)`);
}

/** A 400 whose text says the prompt was longer than the model's context (Ollama, llama.cpp, vLLM, OpenAI wordings). */
function contextExceeded(body: string): boolean {
  return /context (length|window|size)|maximum context|exceeds? the (available )?context|too many tokens|n_ctx/i.test(body);
}

/**
 * The most characters of one model reply (text and tool-call arguments) that are read. A reply is bounded
 * by max_output_tokens on a sane server; a broken or hostile one that streams on forever is cut here.
 */
export const MAX_REPLY_CHARS = 1_000_000;

export function replyTooLong(): ModelError {
  return new ModelError("bad_response", `the model's reply passed ${MAX_REPLY_CHARS} characters and was cut off`, { retryable: false });
}

export function stalledError(where: string, seconds: number): ModelError {
  return new ModelError("timeout", `the model endpoint ${where} stopped sending mid-answer for ${seconds} s (model.first_byte_timeout_s)`);
}
