/**
 * The sending side: replies by SMTP (TLS from the first byte, or STARTTLS when the server offers it), as
 * plain text, threaded under the mail they answer with `Re:`, `In-Reply-To` and `References`.
 */
import type { EmailOptions } from "./options.js";
import { plainFromMarkdown, replySubject } from "./text.js";

/** What a reply threads under: the last mail from that correspondent. */
export interface Thread {
  subject: string;
  messageId: string;
  references: string[];
}

export interface Outgoing {
  to: string;
  text: string;
  thread?: Thread;
}

interface Transport {
  sendMail(mail: Record<string, unknown>): Promise<{ messageId: string }>;
  close(): void;
}

export interface Sender {
  send(mail: Outgoing): Promise<{ id: string }>;
  close(): void;
}

export function createSender(options: EmailOptions): Sender {
  let transport: Promise<Transport> | undefined;
  const { smtp } = options;
  const open = async (): Promise<Transport> => {
    const nodemailer = (await import("nodemailer")).default as unknown as { createTransport(o: Record<string, unknown>): Transport };
    return nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure,
      ...(smtp.user && { auth: { user: smtp.user, pass: smtp.pass } }),
      // Bounded: a server that takes the connection and says nothing must not hold a reply forever.
      connectionTimeout: 20_000,
      greetingTimeout: 20_000,
      socketTimeout: 60_000,
    });
  };
  return {
    async send({ to, text, thread }) {
      transport ??= open();
      const t = await transport;
      const body = plainFromMarkdown(text);
      const info = await t.sendMail({
        from: options.address,
        to,
        subject: thread ? replySubject(thread.subject) : subjectOf(body),
        text: body,
        ...(thread && { inReplyTo: thread.messageId, references: [...thread.references, thread.messageId].slice(-20) }),
        headers: { "Auto-Submitted": thread ? "auto-replied" : "auto-generated" },
      });
      return { id: info.messageId };
    },
    close() {
      void transport?.then((t) => t.close()).catch(() => undefined);
    },
  };
}

/** A new mail's subject: its first line, shortened. */
function subjectOf(text: string): string {
  const first = text.split("\n").find((l) => l.trim()) ?? "hermes";
  return first.length > 70 ? `${first.slice(0, 67).trimEnd()}…` : first.trim();
}
