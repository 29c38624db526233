/**
 * Markdown (as models write it) to Telegram HTML, and splitting under Telegram's 4096-character limit
 * on paragraph and line boundaries, never inside a tag or a code block.
 */
import { type Block, blocks, groupLines } from "../markdown.js";

export const TELEGRAM_LIMIT = 4096;

export interface Chunk {
  html: string;
  /** The same chunk as plain text, for when Telegram rejects the formatting. */
  plain: string;
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Bold, italic and strike in escaped text. */
const emphasis = (html: string) =>
  html
    .replace(/\*\*([^*\n]+)\*\*/g, "<b>$1</b>")
    .replace(/__([^_\n]+)__/g, "<b>$1</b>")
    // As in CommonMark, emphasis hugs its text: `2 * 3 * 4` holds times signs.
    .replace(/(^|[^\w*])\*(?![\s*])([^*\n]*?[^*\s])\*(?=[^\w*]|$)/g, "$1<i>$2</i>")
    .replace(/(^|[^\w])_(?![\s_])([^_\n]*?[^_\s])_(?=[^\w]|$)/g, "$1<i>$2</i>")
    .replace(/~~([^~\n]+)~~/g, "<s>$1</s>");

/** Inline Markdown of one line or paragraph → HTML: code, bold, italic, strike, links. */
export function inlineToHtml(text: string): string {
  const parts = text.split(/(`[^`\n]+`)/g);
  return parts
    .map((part) => {
      if (/^`[^`\n]+`$/.test(part)) return `<code>${escapeHtml(part.slice(1, -1))}</code>`;
      // Links are set aside while the emphasis is read: markers in an address (`#object.__init__`) stay as written,
      // and no tag opened in a label closes outside its <a>.
      const links: string[] = [];
      const text = escapeHtml(part.replace(/\uE000/g, "")).replace(
        /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g,
        (_m, label: string, url: string) => {
          links.push(`<a href="${url.replace(/"/g, "&quot;")}">${emphasis(label)}</a>`);
          return `\uE000${links.length - 1}\uE000`;
        },
      );
      return emphasis(text).replace(/\uE000(\d+)\uE000/g, (_m, i: string) => links[Number(i)] ?? "");
    })
    .join("");
}

function renderLine(line: string): string {
  const heading = line.match(/^#{1,6}\s+(.*)$/);
  if (heading) return `<b>${inlineToHtml(heading[1] ?? "")}</b>`;
  const bullet = line.match(/^(\s*)[-*+]\s+(.*)$/);
  if (bullet) return `${bullet[1]}• ${inlineToHtml(bullet[2] ?? "")}`;
  return inlineToHtml(line);
}

/** Pieces that may each stand alone in a message: paragraphs, or lines of a paragraph too long to keep whole. */
function pieces(block: Block, limit: number): Chunk[] {
  if (block.kind === "code") {
    const open = block.lang ? `<pre><code class="language-${block.lang}">` : "<pre>";
    const close = block.lang ? "</code></pre>" : "</pre>";
    const room = limit - open.length - close.length;
    // The plain form keeps the fences: a chunk the chat flow splits off is formatted again when it is sent,
    // and without them its lines came out as text (a "# comment" as a bold heading).
    return groupLines(block.lines, room, (l) => escapeHtml(l).length).map((lines) => ({
      html: open + lines.map(escapeHtml).join("\n") + close,
      plain: `\`\`\`${block.lang ?? ""}\n${lines.join("\n")}\n\`\`\``,
    }));
  }
  const whole: Chunk = { html: block.lines.map(renderLine).join("\n"), plain: block.lines.join("\n") };
  if (whole.html.length <= limit) return [whole];
  return groupLines(block.lines, limit, (l) => renderLine(l).length).map((lines) => ({
    html: lines.map(renderLine).join("\n"),
    plain: lines.join("\n"),
  }));
}

/** Renders a reply into chunks each under the limit, in order. */
export function formatReply(markdown: string, limit = TELEGRAM_LIMIT): Chunk[] {
  const chunks: Chunk[] = [];
  let html = "";
  let plain = "";
  for (const block of blocks(markdown)) {
    for (const piece of pieces(block, limit)) {
      if (html && html.length + 2 + piece.html.length > limit) {
        chunks.push({ html, plain });
        html = "";
        plain = "";
      }
      html = html ? `${html}\n\n${piece.html}` : piece.html;
      plain = plain ? `${plain}\n\n${piece.plain}` : piece.plain;
    }
  }
  if (html || chunks.length === 0) chunks.push({ html: html || "(empty reply)", plain: plain || "(empty reply)" });
  return chunks;
}
