/** A raw mail as hermes reads it: who sent it, what is new in it, what it threads under, its files. */
import type { Attachment } from "./attachments.js";
import { isForwardSubject, isReplySubject, newText } from "./text.js";

export interface ReadMail {
  /** The one From: address, lower case; undefined when there is none or more than one. */
  from: string | undefined;
  fromName: string | undefined;
  subject: string;
  messageId: string;
  references: string[];
  /** A bounce, an auto-reply or a list mail: never answered. */
  automatic: boolean;
  /** The raw header block, for Authentication-Results. */
  headers: string;
  /** What the writer just wrote (text/plain preferred, HTML as text), a fresh mail's subject first. */
  text: string;
  /** Whether the body says anything (besides the subject). */
  hasBody: boolean;
  /**
   * The files attached, not yet saved: only a trusted sender's are. Left out: images a HTML body shows
   * inline, and a mail forwarded as an attachment, whose text mailparser puts in the body.
   */
  attachments: Attachment[];
}

export async function readMail(source: Buffer): Promise<ReadMail> {
  const { simpleParser } = await import("mailparser");
  const parsed = await simpleParser(source, { skipImageLinks: true, skipTextToHtml: true });
  const crlfEnd = source.indexOf("\r\n\r\n");
  const end = crlfEnd >= 0 ? crlfEnd : source.indexOf("\n\n");
  const headers = source.subarray(0, end < 0 ? source.length : end).toString("latin1");
  const fromList = parsed.from?.value ?? [];
  // One From field with one address in it. A second From field (mailparser reads the first, a DKIM check
  // the last) or an empty angle address (`"me@example.org" <>`, read as the quoted name) counts as none.
  const fromFields = headerFields(headers, "from");
  // One address in it, too: `colleague@… <me@…>` or `<me@…> <colleague@…>` names two, and parsers differ on which is
  // the sender (addressparser keeps the first angle address; Python's email package reads the first bare one).
  const field = fromFields[0] ?? "";
  const single =
    fromList.length === 1 && fromFields.length === 1 && !/<\s*>/.test(field) && addressCount(field) === 1 ? fromList[0] : undefined;
  const refs = parsed.references;
  // A text part that is empty beside an HTML one (some clients send that) would leave the mail without its words.
  const body = parsed.text?.trim() ? parsed.text : typeof parsed.html === "string" ? await textOfHtml(parsed.html) : (parsed.text ?? "");
  const subject = parsed.subject ?? "";
  const isReply = isReplySubject(subject) || Boolean(parsed.inReplyTo);
  // A forward ("summarise this" above the original) is all new to hermes: the original is what it is about.
  const fresh = (isForwardSubject(subject) ? body : newText(body)).trim();
  let text = fresh;
  // A fresh mail's subject often says what it is about ("Summarise this"); a reply's adds nothing.
  if (subject && !isReply && !text.toLowerCase().startsWith(subject.toLowerCase())) text = `${subject}\n\n${text}`;
  return {
    from: single?.address?.toLowerCase() || undefined,
    fromName: single?.name || undefined,
    subject,
    messageId: parsed.messageId ?? "",
    references: Array.isArray(refs) ? refs : refs ? [refs] : [],
    automatic: isAutomatic(parsed.headers, single?.address ?? fromList[0]?.address ?? ""),
    headers,
    text: text.trim(),
    hasBody: fresh.length > 0,
    attachments: (parsed.attachments ?? [])
      .filter((a) => !a.related)
      .map((a) => ({
        name: a.filename || "attachment",
        mime: a.contentType ?? "",
        bytes: a.content,
      })),
  };
}

/** An HTML body's text, as mailparser makes it for a mail with no text part (html-to-text). */
async function textOfHtml(html: string): Promise<string> {
  const { convert } = await import("html-to-text");
  const cell = { format: "inlineSurround", options: { prefix: "", suffix: " " } };
  try {
    return convert(html, {
      wordwrap: false,
      // mailparser's own limit: deeper HTML overflowed the stack, and the mail was left unread.
      limits: { maxDepth: 1000 },
      selectors: [
        { selector: "img", format: "skip" },
        // A table's cells apart and its rows on lines of their own ("Departs 10:40", not "Departs10:40").
        { selector: "tr", format: "block", options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
        { selector: "td", ...cell },
        { selector: "th", ...cell },
      ],
    })
      .replace(/[ \t]+$/gm, "")
      .replace(/\n{3,}/g, "\n\n");
  } catch {
    return ""; // HTML html-to-text cannot read: the mail is read as if its body were empty, as before
  }
}

/** How many addresses a raw address field names: its `@`s outside quoted strings and comments. */
function addressCount(value: string): number {
  let count = 0;
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === "\\") i++;
    else if (quoted) quoted = c !== '"';
    else if (c === '"') quoted = true;
    else if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    else if (c === "@" && depth === 0) count++;
  }
  return count;
}

/** The values of the header fields `name` in a raw header block, each unfolded. */
function headerFields(headers: string, name: string): string[] {
  const unfolded = headers.replace(/\r?\n[ \t]+/g, " ");
  return [...unfolded.matchAll(new RegExp(`^${name}:(.*)$`, "gim"))].map((m) => m[1] ?? "");
}

/**
 * A bounce, an auto-reply or a list mail, by any of the marks responders use: Auto-Submitted (RFC 3834),
 * and the older ones many vacation responders still set instead (Precedence, X-Autoreply, X-Autorespond),
 * a delivery report's multipart/report, a list's List-Id, and the addresses bounces come from.
 */
function isAutomatic(headers: Map<string, unknown>, from: string): boolean {
  const text = (name: string) => String(headers.get(name) ?? "").toLowerCase();
  const type = headers.get("content-type") as { value?: string } | string | undefined;
  const contentType = (typeof type === "string" ? type : (type?.value ?? "")).toLowerCase();
  return (
    (headers.has("auto-submitted") && text("auto-submitted") !== "no") ||
    /^(bulk|junk|list|auto_reply)\b/.test(text("precedence")) ||
    headers.has("x-autoreply") ||
    headers.has("x-autorespond") ||
    headers.has("list-id") ||
    contentType.startsWith("multipart/report") ||
    /^(mailer-daemon|postmaster)@/i.test(from)
  );
}
