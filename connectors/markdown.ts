/**
 * Markdown as models write it, cut into the pieces a chat message may hold: paragraphs and fenced code
 * blocks, grouped under a size limit on paragraph and line boundaries. Shared by the chat connectors.
 */
import { wholeEnd } from "../src/text.js";

export interface Block {
  kind: "text" | "code";
  lang?: string;
  lines: string[];
}

/**
 * A fence that opens a code block, with its info string: the language is its first word, which may hold
 * `#`, `+`, `.` or `-` (c#, f#, c++, objective-c); what follows it (` title="x"`) is dropped. As in
 * CommonMark, an info string holds no backtick (```js``` on one line is text). The language's characters
 * are also all that Telegram's `class="language-…"` is given.
 */
const OPENING_FENCE = /^\s*```\s*([\w#+.-]*)[^`]*$/;
const CLOSING_FENCE = /^\s*```\s*$/;

/** Splits Markdown into paragraphs and fenced code blocks. */
export function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  let current: Block | undefined;
  for (const line of markdown.replace(/\r\n/g, "\n").split("\n")) {
    if (current?.kind === "code") {
      // Only a bare fence closes a block: a line that opens one (```python) is code inside it.
      if (CLOSING_FENCE.test(line)) current = undefined;
      else current.lines.push(line);
      continue;
    }
    const fence = line.match(OPENING_FENCE);
    if (fence) {
      current = { kind: "code", lang: fence[1] || undefined, lines: [] };
      out.push(current);
      continue;
    }
    if (line.trim() === "") {
      current = undefined;
      continue;
    }
    if (!current) {
      current = { kind: "text", lines: [] };
      out.push(current);
    }
    current.lines.push(line);
  }
  return out;
}

/** Groups lines so each group's rendered size fits; a single line too long is cut as plain text. */
export function groupLines(lines: string[], room: number, size: (line: string) => number): string[][] {
  const groups: string[][] = [];
  let current: string[] = [];
  let used = 0;
  const flush = () => {
    if (current.length) groups.push(current);
    current = [];
    used = 0;
  };
  for (const line of lines) {
    let l = line;
    while (size(l) > room) {
      flush();
      // Never between the halves of an emoji: a message with half of one is refused or shows garbage.
      const cut = wholeEnd(l, Math.floor(room / 2));
      groups.push([l.slice(0, cut)]);
      l = l.slice(cut);
    }
    const cost = size(l) + (current.length ? 1 : 0);
    if (used + cost > room) flush();
    current.push(l);
    used += size(l) + (current.length > 1 ? 1 : 0);
  }
  flush();
  return groups;
}

/**
 * Splits Markdown into messages of at most `limit` characters, on paragraph and line boundaries.
 * A code block cut in two is closed at the end of one message and reopened at the start of the next.
 */
export function splitMarkdown(markdown: string, limit: number): string[] {
  const pieces: string[] = [];
  for (const block of blocks(markdown)) {
    if (block.kind === "code") {
      const open = `\`\`\`${block.lang ?? ""}\n`;
      const close = "\n```";
      for (const lines of groupLines(block.lines, limit - open.length - close.length, (l) => l.length)) {
        pieces.push(open + lines.join("\n") + close);
      }
      continue;
    }
    const whole = block.lines.join("\n");
    if (whole.length <= limit) pieces.push(whole);
    else for (const lines of groupLines(block.lines, limit, (l) => l.length)) pieces.push(lines.join("\n"));
  }
  const messages: string[] = [];
  let current = "";
  for (const piece of pieces) {
    if (current && current.length + 2 + piece.length > limit) {
      messages.push(current);
      current = "";
    }
    current = current ? `${current}\n\n${piece}` : piece;
  }
  if (current || messages.length === 0) messages.push(current || "(empty reply)");
  return messages;
}
