/** A mail's new text (quoted mail and signatures left out), and hermes' Markdown made readable as plain text. */

/** Lines that start what a client quotes below a reply, or a forwarded original. */
const QUOTE_HEADS = [
  /^On .{1,200}wrote:\s*$/i, // Gmail, Apple Mail, Thunderbird
  /^Am .{1,200}schrieb.{0,100}:\s*$/i,
  /^Le .{1,200}a écrit\s*:\s*$/i,
  /^-{2,}\s*Original Message\s*-{2,}\s*$/i,
  /^_{10,}\s*$/, // Outlook's rule above From:/Sent:
];

/**
 * Whether an Outlook-style quoted header block starts at line i: `From: …` with `Sent:`/`Date:` among the next
 * lines, maybe under a rule (an HTML body's <hr> comes out as dashes). Outlook for Mac and mobile write it bare.
 */
function quotedHeaderAt(lines: string[], i: number): boolean {
  let at = i;
  if (/^\s*[-_]{10,}\s*$/.test(lines[at] ?? "")) at++;
  while (at < lines.length && !(lines[at] ?? "").trim()) at++;
  if (!/^\*?From:\*?\s/i.test(lines[at] ?? "")) return false;
  // Outlook's block always names the subject: a From:/Date: pair alone is as likely the owner's own words (a trip's details).
  const block = lines.slice(at + 1, at + 8);
  return block.some((l) => /^\*?(Sent|Date):\*?\s/i.test(l)) && block.some((l) => /^\*?Subject:\*?\s/i.test(l));
}

/** Lines that start a signature or a client's footer. */
const SIGNATURE_HEADS = [/^-- ?$/, /^Sent from my \w+/i, /^Get Outlook for /i];

/**
 * The part of a mail body its writer just wrote: up to the first quote header or signature, without `>`
 * lines. A mail that is nothing but a quote (a bare forward) keeps its text, so nothing is lost.
 */
export function newText(body: string): string {
  const lines = body.replace(/\r\n/g, "\n").split("\n");
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const twoLines = `${line} ${lines[i + 1] ?? ""}`;
    if (SIGNATURE_HEADS.some((re) => re.test(line))) break;
    if (QUOTE_HEADS.some((re) => re.test(line)) || /^On .{1,200}wrote:\s*$/i.test(twoLines) || quotedHeaderAt(lines, i)) break;
    if (/^\s*>/.test(line)) continue;
    kept.push(line);
  }
  const text = kept.join("\n").trim();
  return text || body.trim();
}

/** Markdown as a model writes it, readable in a plain-text mail: links spelled out, emphasis and heading marks light. */
export function plainFromMarkdown(markdown: string): string {
  let inCode = false;
  return markdown
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((line) => {
      if (/^\s*```/.test(line)) {
        inCode = !inCode;
        return "";
      }
      if (inCode) return `    ${line}`;
      return line
        .replace(/^(#{1,6})\s+(.*)$/, (_, _h: string, title: string) => title.toUpperCase())
        .replace(/!?\[([^\]]+)\]\((\S+?)\)/g, (_, label: string, url: string) => (label === url ? url : `${label} <${url}>`))
        .replace(/\*\*(.+?)\*\*/g, "*$1*")
        .replace(/__(.+?)__/g, "*$1*")
        .replace(/`([^`]+)`/g, "$1")
        .replace(/^(\s*)[*+] /, "$1- ");
    })
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Whether a subject says it is a forward (`Fwd:`, `FW:`, the German `WG:`). */
export function isForwardSubject(subject: string): boolean {
  return /^(fwd?|wg):/i.test(subject.trim());
}

/** Whether a subject already says it is a reply (`Re:`, or the German and Scandinavian `AW:`, `SV:`). */
export function isReplySubject(subject: string): boolean {
  return /^(re|aw|sv):/i.test(subject);
}

/** `Re: <subject>`, without stacking `Re:`s. */
export function replySubject(subject: string): string {
  const s = subject.trim() || "(no subject)";
  return isReplySubject(s) ? s : `Re: ${s}`;
}
