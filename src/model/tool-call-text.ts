import { newCallId } from "./ollama.js";
import type { ToolCall } from "./types.js";

export interface ParsedReply {
  /** The reply with every recognised call removed; text before, between and after calls is kept. */
  text: string;
  calls: ToolCall[];
}

const OPEN = "<tool_call>";
const CLOSE = "</tool_call>";

/**
 * Finds tool calls a model wrote as text: Hermes-style `<tool_call>{"name": …, "arguments": …}</tool_call>`
 * blocks, or (when no block is present and `fenced` is set) one fenced JSON object shaped like a call.
 * Never throws: a block that is cut off or holds malformed JSON becomes a call with `parseError`.
 */
export function parseToolCallText(text: string, options: { fenced?: boolean } = {}): ParsedReply {
  if (text.includes(OPEN)) return parseBlocks(text);
  if (options.fenced) return parseFenced(text);
  return { text, calls: [] };
}

function parseBlocks(text: string): ParsedReply {
  const calls: ToolCall[] = [];
  const kept: string[] = [];
  let pos = 0;
  for (let open = text.indexOf(OPEN); open >= 0; open = text.indexOf(OPEN, pos)) {
    kept.push(text.slice(pos, open));
    const bodyStart = open + OPEN.length;
    const { call, end } = readBlock(text, bodyStart);
    calls.push(call);
    pos = end;
  }
  kept.push(text.slice(pos));
  return { text: tidy(kept.join("")), calls };
}

/** Reads one block body starting after `<tool_call>`; returns the call and where the block ends. */
function readBlock(text: string, start: number): { call: ToolCall; end: number } {
  const objectStart = text.indexOf("{", start);
  const close = text.indexOf(CLOSE, start);
  const nextOpen = text.indexOf(OPEN, start);
  const limit = firstOf(close, nextOpen, text.length);
  if (objectStart < 0 || objectStart > limit) {
    const end = close >= 0 && close === limit ? close + CLOSE.length : limit;
    return { call: broken("", `the <tool_call> block holds no JSON object: ${preview(text.slice(start, limit))}`), end };
  }
  const objectEnd = scanObject(text, objectStart);
  if (objectEnd < 0) {
    const end = close >= 0 ? close + CLOSE.length : text.length;
    const body = text.slice(objectStart, close >= 0 ? close : text.length);
    const reason = close >= 0 ? "is not valid JSON" : "was cut off before it ended (the reply hit the output limit)";
    return { call: broken(guessName(body), `the tool call ${reason}: ${preview(body)}`), end };
  }
  const json = text.slice(objectStart, objectEnd);
  const after = text.slice(objectEnd).match(/^\s*<\/tool_call>/);
  const end = after ? objectEnd + after[0].length : objectEnd;
  return { call: toCall(json), end };
}

function parseFenced(text: string): ParsedReply {
  const fence = /```(?:json)?[ \t]*\n([\s\S]*?)\n?```/g;
  for (const match of text.matchAll(fence)) {
    const body = (match[1] ?? "").trim();
    if (!body.startsWith("{")) continue;
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      continue;
    }
    if (!isCallShaped(value)) continue;
    const rest = text.slice(0, match.index) + text.slice((match.index ?? 0) + match[0].length);
    return { text: tidy(rest), calls: [fromObject(value)] };
  }
  return { text, calls: [] };
}

/** Index just past the JSON object starting at `start`, honouring strings and escapes; -1 if it never closes. */
export function scanObject(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

function toCall(json: string): ToolCall {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    return broken(guessName(json), `the tool call is not valid JSON (${(err as Error).message}): ${preview(json)}`);
  }
  if (!value || typeof value !== "object" || typeof (value as { name?: unknown }).name !== "string") {
    return broken("", `a tool call needs {"name": "...", "arguments": {...}}; got ${preview(json)}`);
  }
  return fromObject(value as Record<string, unknown>);
}

function fromObject(value: Record<string, unknown>): ToolCall {
  const name = String(value.name);
  let args = value.arguments ?? value.parameters ?? {};
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      return broken(name, `the arguments of ${name} are a string that is not JSON: ${preview(args as string)}`);
    }
  }
  return { id: newCallId(), name, args };
}

function isCallShaped(value: unknown): value is Record<string, unknown> {
  if (!value || typeof value !== "object" || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  const args = v.arguments ?? v.parameters;
  const keys = Object.keys(v).filter((k) => k !== "id" && k !== "type");
  return typeof v.name === "string" && keys.length === 2 && args !== null && typeof args === "object";
}

function broken(name: string, parseError: string): ToolCall {
  return { id: newCallId(), name, args: undefined, parseError };
}

function guessName(body: string): string {
  return body.match(/"name"\s*:\s*"([^"\\]{1,64})"/)?.[1] ?? "";
}

function firstOf(...positions: number[]): number {
  return Math.min(...positions.filter((p) => p >= 0));
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 120 ? `${flat.slice(0, 120)}…` : flat;
}

function tidy(text: string): string {
  return text.replace(/\n{3,}/g, "\n\n").trim();
}

/**
 * Hides `<tool_call>` blocks from streamed text: holds back anything that may be the start of a block,
 * and drops everything inside one.
 */
export function createToolCallTextFilter(emit: (text: string) => void) {
  let pending = "";
  let inside = false;
  return (delta: string) => {
    pending += delta;
    for (;;) {
      if (inside) {
        const close = pending.indexOf(CLOSE);
        if (close < 0) {
          pending = pending.slice(Math.max(0, pending.length - CLOSE.length));
          return;
        }
        pending = pending.slice(close + CLOSE.length);
        inside = false;
        continue;
      }
      const open = pending.indexOf(OPEN);
      if (open >= 0) {
        if (open > 0) emit(pending.slice(0, open));
        pending = pending.slice(open + OPEN.length);
        inside = true;
        continue;
      }
      const hold = partialSuffix(pending, OPEN);
      const out = pending.slice(0, pending.length - hold);
      if (out) emit(out);
      pending = pending.slice(pending.length - hold);
      return;
    }
  };
}

/** Length of the longest suffix of `text` that is a prefix of `tag`. */
function partialSuffix(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (tag.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}
