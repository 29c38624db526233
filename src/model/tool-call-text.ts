import { newCallId } from "./call-id.js";
import type { ToolCall } from "./types.js";

export interface ParsedReply {
  /** The reply with every recognised call removed; text before, between and after calls is kept. */
  text: string;
  calls: ToolCall[];
}

export const OPEN = "<tool_call>";
export const CLOSE = "</tool_call>";

/**
 * Finds tool calls a model wrote as text: Hermes-style `<tool_call>{"name": …, "arguments": …}</tool_call>`
 * blocks, or (when no block is present and `fenced` is set) one fenced JSON object shaped like a call.
 * Never throws: a block that is cut off or holds malformed JSON becomes a call with `parseError`.
 */
export function parseToolCallText(text: string, options: { fenced?: boolean } = {}): ParsedReply {
  if (findOpen(text, 0, text.length, CODE_START).index >= 0) return parseBlocks(text);
  if (options.fenced) return parseFenced(text);
  return { text, calls: [] };
}

/**
 * Blocks shown inside code (fenced or inline) are examples, not calls: they stay reply text. Linear in the
 * text, however many blocks it holds: the searches only move forward, and a block's object is scanned at
 * most to the next `<` outside its strings.
 */
function parseBlocks(text: string): ParsedReply {
  const calls: ToolCall[] = [];
  const kept: string[] = [];
  const find = { object: forwardSearch(text, "{"), close: forwardSearch(text, CLOSE), open: forwardSearch(text, OPEN) };
  let pos = 0;
  let code = CODE_START;
  for (;;) {
    const found = findOpen(text, pos, text.length, code);
    if (found.index < 0) break;
    kept.push(text.slice(pos, found.index));
    const { call, end } = readBlock(text, found.index + OPEN.length, find);
    calls.push(call);
    pos = end;
    code = found.code;
  }
  kept.push(text.slice(pos));
  return { text: tidy(kept.join("")), calls };
}

type Search = (from: number) => number;

/**
 * `text.indexOf(needle, from)` for a `from` that never moves back: a search is answered from the last
 * match while that still lies ahead, so all the searches of one text together read it about once.
 */
function forwardSearch(text: string, needle: string): Search {
  let found = -2;
  return (from) => {
    if (found === -1 || found >= from) return found;
    found = text.indexOf(needle, from);
    return found;
  };
}

/** Reads one block body starting after `<tool_call>`; returns the call and where the block ends. */
function readBlock(text: string, start: number, find: { object: Search; close: Search; open: Search }): { call: ToolCall; end: number } {
  const objectStart = find.object(start);
  const close = find.close(start);
  const nextOpen = find.open(start);
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

/**
 * The reply's first fenced block that holds a call, read line by line as `createFencedCallFilter` reads a
 * stream: a line that starts with three or more backticks opens a block, a line of at least as many
 * backticks closes it, and the block is a call when its info is empty or `json` and its body is a JSON
 * object shaped like a call. The block goes from the reply; other blocks, and text, stay.
 */
function parseFenced(text: string): ParsedReply {
  let open: { start: number; n: number; info: string; bodyStart: number } | undefined;
  for (let pos = 0; pos <= text.length; ) {
    const nl = text.indexOf("\n", pos);
    const next = nl < 0 ? text.length : nl + 1;
    const fence = fenceOf(text.slice(pos, nl < 0 ? text.length : nl));
    if (!open && fence) open = { start: pos, n: fence.n, info: fence.info, bodyStart: next };
    else if (open && fence && fence.n >= open.n && fence.info === "") {
      const body = text.slice(open.bodyStart, pos);
      if (callInfo(open.info) && isCall(body)) {
        const value = JSON.parse(body.trim()) as Record<string, unknown>;
        return { text: tidy(text.slice(0, open.start) + text.slice(next)), calls: [fromObject(value)] };
      }
      open = undefined;
    }
    if (nl < 0) break;
    pos = next;
  }
  return { text, calls: [] };
}

/** A fence line's backticks and info (`json`, `bash`, …; lower case, trimmed), or undefined for any other line. */
export function fenceOf(line: string): { n: number; info: string } | undefined {
  const run = /^`{3,}/.exec(line)?.[0].length ?? 0;
  return run ? { n: run, info: line.slice(run).trim().toLowerCase() } : undefined;
}

/** A block of this info may hold a call: none, or json. */
export const callInfo = (info: string) => info === "" || info === "json";

/**
 * Index just past the JSON object starting at `start`, honouring strings and escapes; -1 if it never closes.
 * JSON has no `<` outside a string, so the scan gives up at the first one (the next block's tag, say).
 */
export function scanObject(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "<") return -1;
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

export function isCall(body: string): boolean {
  try {
    return isCallShaped(JSON.parse(body.trim()));
  } catch {
    return false;
  }
}

/**
 * Where Markdown code is, as far as the text so far tells: a run of three or more backticks opens a
 * fenced block closed by a run at least as long; a shorter run opens inline code closed by a run of the
 * same length or by the end of the line. Nothing is looked ahead, so streamed and final text agree.
 */
export interface CodeState {
  fence: number;
  inline: number;
  /** Backticks seen in a row just before the current position, not yet counted as a delimiter. */
  run: number;
}

export const CODE_START: CodeState = { fence: 0, inline: 0, run: 0 };

/** The state after `ch`, and whether `ch` itself lies inside code. */
export function stepCode(state: CodeState, ch: string): { state: CodeState; inCode: boolean } {
  if (ch === "`") return { state: { ...state, run: state.run + 1 }, inCode: true };
  let { fence, inline } = state;
  const n = state.run;
  if (n > 0) {
    if (fence > 0) fence = n >= fence ? 0 : fence;
    else if (inline > 0) inline = n === inline ? 0 : inline;
    else if (n >= 3) fence = n;
    else inline = n;
  }
  if (ch === "\n" && inline > 0) return { state: { fence, inline: 0, run: 0 }, inCode: true };
  return { state: { fence, inline, run: 0 }, inCode: fence > 0 || inline > 0 };
}

export function scanCode(state: CodeState, text: string): CodeState {
  let s = state;
  for (const ch of text) if (s.run > 0 || ch === "`" || ch === "\n") s = stepCode(s, ch).state;
  return s;
}

/** The first `<tool_call>` in text[from, end) that is outside code, and the code state at its `<`. */
export function findOpen(text: string, from: number, end: number, start: CodeState): { index: number; code: CodeState } {
  let code = start;
  for (let i = from; i < end; i++) {
    const ch = text[i] ?? "";
    if (code.run === 0 && ch !== "`" && ch !== "\n" && ch !== "<") continue;
    const step = stepCode(code, ch);
    if (ch === "<" && !step.inCode && text.startsWith(OPEN, i)) return { index: i, code: step.state };
    code = step.state;
  }
  return { index: -1, code };
}
