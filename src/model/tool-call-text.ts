import { newCallId } from "./call-id.js";
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
function fenceOf(line: string): { n: number; info: string } | undefined {
  const run = /^`{3,}/.exec(line)?.[0].length ?? 0;
  return run ? { n: run, info: line.slice(run).trim().toLowerCase() } : undefined;
}

/** A block of this info may hold a call: none, or json. */
const callInfo = (info: string) => info === "" || info === "json";

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

/** How far a streamed block has been read: its close and next open (-1: not seen), its object's start and scan. */
interface BlockScan {
  searched: number;
  close: number;
  next: number;
  object: number;
  /** The object's scan: where it goes on, its depth, inside a string; `end` past it, or -1 (-2: gave up at a `<`). */
  pos: number;
  depth: number;
  inString: boolean;
  end: number;
}

function newBlockScan(): BlockScan {
  return { searched: 0, close: -1, next: -1, object: -1, pos: -1, depth: 0, inString: false, end: -1 };
}

/** `scanObject` over a text that only grows: goes on from where the last call stopped. */
function scanOn(b: BlockScan, text: string): number {
  if (b.end !== -1) return b.end >= 0 ? b.end : -1;
  let i = b.pos < 0 ? b.object : b.pos;
  for (; i < text.length; i++) {
    const c = text[i];
    if (b.inString) {
      if (c === "\\") i++;
      else if (c === '"') b.inString = false;
    } else if (c === '"') b.inString = true;
    else if (c === "<") {
      b.end = -2;
      return -1;
    } else if (c === "{" || c === "[") b.depth++;
    else if (c === "}" || c === "]") {
      b.depth--;
      if (b.depth === 0) {
        b.end = i + 1;
        return b.end;
      }
    }
  }
  b.pos = i;
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
 * and drops everything inside one. A block inside code is shown, as the parser keeps it as text. With
 * `fenced` (the formats whose replies are parsed with it), a fenced JSON call is hidden too.
 */
export function createToolCallTextFilter(emit: (text: string) => void, options: { fenced?: boolean } = {}): TextFilter {
  if (!options.fenced) return createTagFilter(emit);
  let tagged = false;
  const fenced = createFencedCallFilter(emit, () => tagged);
  const tags = createTagFilter(fenced, () => {
    tagged = true;
  });
  return Object.assign((delta: string) => tags(delta), {
    flush() {
      tags.flush();
      fenced.flush();
    },
  });
}

/** Takes the streamed text piece by piece; `flush` at the reply's end lets out what was held back and is text after all. */
export type TextFilter = ((delta: string) => void) & { flush(): void };

type FenceState =
  | { kind: "text" }
  | { kind: "code"; n: number }
  | { kind: "candidate"; n: number; held: string; body: string }
  | { kind: "after"; block: string; held: string };

/**
 * Hides the fenced block `parseFenced` takes as the reply's call, reading the stream line by line as it
 * does. A fence line is held until it is whole; other text passes at once. A block that may hold a call
 * (info empty or `json`, body starting with `{`) is held until it closes: a call is dropped, anything else
 * shown. After the call, the rest is held until `flush`: should a `<tool_call>` block come later
 * (`tagged`), the parser keeps the fenced one as text, and so does the stream then.
 */
function createFencedCallFilter(emit: (text: string) => void, tagged: () => boolean): TextFilter {
  let state: FenceState = { kind: "text" };
  /** The current line while it may still be a fence line (backticks so far, or three and more). */
  let line = "";
  /** Part of the current line went on already: it is no fence line. */
  let passing = false;
  let taken = false;
  const couldBeFence = (text: string) => /^(`{3,}|`{0,2}$)/.test(text);

  /** Text of no fence line, in the current state. */
  const pass = (text: string) => {
    if (state.kind === "text" || state.kind === "code") emit(text);
    else if (state.kind === "after") state.held += text;
    else {
      state.held += text;
      state.body += text;
      const body = state.body.trimStart();
      if (body && !body.startsWith("{")) {
        // No JSON object: a code block, shown as it comes.
        emit(state.held);
        state = { kind: "code", n: state.n };
      }
    }
  };

  /** A whole line that may be a fence line (with its line break, or the reply's last line at `flush`). */
  const whole = (full: string) => {
    const fence = fenceOf(full.endsWith("\n") ? full.slice(0, -1) : full);
    const closes = (n: number) => fence !== undefined && fence.n >= n && fence.info === "";
    switch (state.kind) {
      case "text":
        if (fence && callInfo(fence.info) && !taken && !tagged()) state = { kind: "candidate", n: fence.n, held: full, body: "" };
        else {
          if (fence) state = { kind: "code", n: fence.n };
          emit(full);
        }
        return;
      case "code":
        if (closes(state.n)) state = { kind: "text" };
        emit(full);
        return;
      case "candidate":
        if (!closes(state.n)) return pass(full);
        if (isCall(state.body)) {
          taken = true;
          state = { kind: "after", block: state.held + full, held: "" };
        } else {
          emit(state.held + full);
          state = { kind: "text" };
        }
        return;
      case "after":
        state.held += full;
    }
  };

  const feed = (delta: string) => {
    let rest = delta;
    while (rest) {
      const nl = rest.indexOf("\n");
      const piece = nl < 0 ? rest : rest.slice(0, nl + 1);
      rest = nl < 0 ? "" : rest.slice(nl + 1);
      if (passing) {
        pass(piece);
        if (nl >= 0) passing = false;
        continue;
      }
      line += piece;
      if (nl >= 0) {
        const full = line;
        line = "";
        whole(full);
      } else if (!couldBeFence(line)) {
        const text = line;
        line = "";
        passing = true;
        pass(text);
      }
    }
  };

  const flush = () => {
    if (line) whole(line);
    line = "";
    passing = false;
    // A block that never closed is text to the parser; after the call, the rest (and the call, if tags came).
    if (state.kind === "candidate") emit(state.held);
    else if (state.kind === "after") emit(tagged() ? state.block + state.held : state.held);
    state = { kind: "text" };
  };
  return Object.assign(feed, { flush });
}

function isCall(body: string): boolean {
  try {
    return isCallShaped(JSON.parse(body.trim()));
  } catch {
    return false;
  }
}

function createTagFilter(emit: (text: string) => void, onBlock?: () => void): TextFilter {
  let pending = "";
  let inside = false;
  let code = CODE_START;
  /** Inside a block, what is known of `pending` so far: read on from there as pieces come (linear, not rescanned). */
  let block = newBlockScan();
  /**
   * Where the block that `pending` is inside of ends, as `readBlock` reads it: past its `</tool_call>`, or
   * at the end of its JSON object when other text follows that; undefined while the stream may still tell
   * (`final`: it has ended). Text after that end is reply text.
   */
  const blockEnd = (final: boolean): number | undefined => {
    const b = block;
    const from = (tag: string) => Math.max(0, b.searched - tag.length + 1);
    if (b.close < 0) b.close = pending.indexOf(CLOSE, from(CLOSE));
    if (b.next < 0) b.next = pending.indexOf(OPEN, from(OPEN));
    if (b.object < 0) b.object = pending.indexOf("{", b.searched);
    b.searched = pending.length;
    const { close, next } = b;
    const limit = close >= 0 && (next < 0 || close < next) ? close : next;
    if (b.object < 0 || (limit >= 0 && b.object > limit)) {
      if (limit < 0) return final ? pending.length : undefined;
      return limit === close ? close + CLOSE.length : limit;
    }
    const objectEnd = scanOn(b, pending);
    if (objectEnd < 0) {
      // Cut off, or broken before its close: a call that fails, whose block runs to its close.
      if (close >= 0) return close + CLOSE.length;
      return final ? pending.length : undefined;
    }
    const after = pending.slice(objectEnd);
    const closing = /^\s*<\/tool_call>/.exec(after);
    if (closing) return objectEnd + closing[0].length;
    // Spaces, or the start of the close tag: it may still come.
    if (!final && CLOSE.startsWith(after.trimStart())) return undefined;
    return objectEnd;
  };
  const flush = () => {
    // The start of a tag that never came is text; so is what follows a block's object without its close.
    if (inside) {
      pending = pending.slice(blockEnd(true));
      inside = false;
    }
    if (pending) emit(pending);
    pending = "";
  };
  const feed = (delta: string) => {
    pending += delta;
    for (;;) {
      if (inside) {
        const end = blockEnd(false);
        if (end === undefined) return;
        pending = pending.slice(end);
        inside = false;
        continue;
      }
      const partial = partialSuffix(pending, OPEN);
      const found = findOpen(pending, 0, pending.length - partial, code);
      code = found.code;
      if (found.index >= 0) {
        if (found.index > 0) emit(pending.slice(0, found.index));
        pending = pending.slice(found.index + OPEN.length);
        inside = true;
        block = newBlockScan();
        onBlock?.();
        continue;
      }
      const hold = partial > 0 && !stepCode(code, "<").inCode ? partial : 0;
      const out = pending.slice(0, pending.length - hold);
      if (out) emit(out);
      if (hold === 0) code = scanCode(code, pending.slice(pending.length - partial));
      pending = pending.slice(pending.length - hold);
      return;
    }
  };
  return Object.assign(feed, { flush });
}

/** Length of the longest suffix of `text` that is a prefix of `tag`. */
function partialSuffix(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (tag.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}

/**
 * Where Markdown code is, as far as the text so far tells: a run of three or more backticks opens a
 * fenced block closed by a run at least as long; a shorter run opens inline code closed by a run of the
 * same length or by the end of the line. Nothing is looked ahead, so streamed and final text agree.
 */
interface CodeState {
  fence: number;
  inline: number;
  /** Backticks seen in a row just before the current position, not yet counted as a delimiter. */
  run: number;
}

const CODE_START: CodeState = { fence: 0, inline: 0, run: 0 };

/** The state after `ch`, and whether `ch` itself lies inside code. */
function stepCode(state: CodeState, ch: string): { state: CodeState; inCode: boolean } {
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

function scanCode(state: CodeState, text: string): CodeState {
  let s = state;
  for (const ch of text) if (s.run > 0 || ch === "`" || ch === "\n") s = stepCode(s, ch).state;
  return s;
}

/** The first `<tool_call>` in text[from, end) that is outside code, and the code state at its `<`. */
function findOpen(text: string, from: number, end: number, start: CodeState): { index: number; code: CodeState } {
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
