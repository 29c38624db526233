/** A raw mail as hermes reads it: who sent it, what is new in it, what it threads under, its files. */
import type { Attachment } from "./attachments.js";
import { isReplySubject, newText } from "./text.js";

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
  const single = fromList.length === 1 ? fromList[0] : undefined;
  const auto = String(parsed.headers.get("auto-submitted") ?? "no").toLowerCase();
  const refs = parsed.references;
  const body = parsed.text ?? "";
  const subject = parsed.subject ?? "";
  const isReply = isReplySubject(subject) || Boolean(parsed.inReplyTo);
  const fresh = newText(body).trim();
  let text = fresh;
  // A fresh mail's subject often says what it is about ("Summarise this"); a reply's adds nothing.
  if (subject && !isReply && !text.toLowerCase().startsWith(subject.toLowerCase())) text = `${subject}\n\n${text}`;
  return {
    from: single?.address?.toLowerCase() || undefined,
    fromName: single?.name || undefined,
    subject,
    messageId: parsed.messageId ?? "",
    references: Array.isArray(refs) ? refs : refs ? [refs] : [],
    automatic: auto !== "no" || parsed.headers.has("list-id") || /^mailer-daemon@/i.test(single?.address ?? ""),
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
