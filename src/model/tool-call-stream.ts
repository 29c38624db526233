// The streamed side of tool calls written as text: what a reply shows while it comes, with the calls
// `parseToolCallText` (tool-call-text.ts) will take out of it hidden, so the stream shows its text.
import { CLOSE, CODE_START, callInfo, fenceOf, findOpen, isCall, OPEN, scanCode, stepCode } from "./tool-call-text.js";

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
