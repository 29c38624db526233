import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

export const MAX_BODY_BYTES = 1024 * 1024;

export type ErrorCode =
  | "unauthorized"
  | "not_found"
  | "too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "busy"
  | "bad_json"
  | "bad_request"
  | "unknown_approval"
  | "already_decided"
  | "expired"
  | "internal";

/** Every API error: `{"error":{"code","message"}}`. */
export function apiError(c: Context, status: ContentfulStatusCode, code: ErrorCode, message: string): Response {
  return c.json({ error: { code, message } }, status);
}

export type ParsedBody = { ok: true; raw: Buffer; value: unknown } | { ok: false; response: Response };

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(;|$)/i;
const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;

/** Reads a JSON (or, with `form`, URL-encoded) body; anything else is 415, bad JSON is 400. */
export async function readBody(c: Context, o: { form: boolean }): Promise<ParsedBody> {
  const type = c.req.header("content-type") ?? "";
  const isJson = JSON_TYPE.test(type);
  if (!isJson && !(o.form && FORM_TYPE.test(type))) {
    const accepted = o.form ? "application/json or application/x-www-form-urlencoded" : "application/json";
    return { ok: false, response: apiError(c, 415, "unsupported_media_type", `send the body as ${accepted}`) };
  }
  const raw = Buffer.from(await c.req.arrayBuffer());
  if (!isJson) return { ok: true, raw, value: formObject(raw.toString("utf8")) };
  if (raw.length === 0) return { ok: true, raw, value: {} };
  const parsed = parseJsonBody(raw.toString("utf8"));
  return parsed.ok ? { ok: true, raw, value: parsed.value } : { ok: false, response: apiError(c, 400, "bad_json", parsed.message) };
}

/** A request's JSON body, or why not: not JSON, or nested deeper than MAX_JSON_DEPTH. */
export function parseJsonBody(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  if (nestsDeeper(text, MAX_JSON_DEPTH)) return { ok: false, message: `the body nests deeper than ${MAX_JSON_DEPTH} levels` };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, message: "the body is not valid JSON" };
  }
}

/**
 * How deep a JSON body may nest. JSON.parse takes ~100,000 levels in 200 KB, and JSON.stringify (a hook's
 * template, the store) then runs out of stack on them; no webhook or chat request nests past a dozen.
 */
const MAX_JSON_DEPTH = 64;

/** Whether the JSON `text` opens more than `max` arrays and objects inside each other (strings skipped). */
function nestsDeeper(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) {
      if (++depth > max) return true;
    } else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return false;
}

/** A form as an object; a field given more than once becomes a list. */
function formObject(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(text)) {
    const seen = out[key];
    out[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}
