/** The other side of the email tests: people who send mail by SMTP and read their mailbox by IMAP. */
import { ImapFlow } from "imapflow";
import { type ParsedMail, simpleParser } from "mailparser";
import nodemailer from "nodemailer";
import { MAIL_USERS, type MailServers } from "../fakes/mail-servers.js";

/** The receiving server's name, as it would write Authentication-Results. */
export const AUTHSERV = "mail.example.org";

/** The header a receiving server adds after checking DKIM: `pass` or `fail` for `domain`. */
export function authResults(domain: string, dkim: "pass" | "fail" = "pass"): string {
  return `${AUTHSERV}; dkim=${dkim} header.d=${domain} header.s=sel; spf=${dkim === "pass" ? "pass" : "softfail"} smtp.mailfrom=${domain}`;
}

export interface Outgoing {
  from: string;
  subject: string;
  text?: string;
  html?: string;
  auth?: string;
  inReplyTo?: string;
  references?: string[];
  attachments?: { filename: string; content: Buffer | string; contentType?: string }[];
}

/** Sends mail to hermes through Postfix (authenticated as the owner); resolves its Message-ID. */
export async function sendToHermes(servers: MailServers, mail: Outgoing): Promise<string> {
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port: servers.smtpPort, secure: false, auth: MAIL_USERS.owner });
  const info = await transport.sendMail({
    from: mail.from,
    to: MAIL_USERS.hermes.user,
    subject: mail.subject,
    ...(mail.text !== undefined && { text: mail.text }),
    ...(mail.html !== undefined && { html: mail.html }),
    ...(mail.inReplyTo && { inReplyTo: mail.inReplyTo, references: mail.references }),
    ...(mail.attachments && { attachments: mail.attachments }),
    headers: mail.auth ? { "Authentication-Results": mail.auth } : {},
  });
  transport.close();
  return info.messageId as string;
}

export interface Stored {
  uid: number;
  seen: boolean;
  mail: ParsedMail;
}

/**
 * Every message in a user's INBOX, parsed, with its \Seen flag (read without setting it), in the order
 * Postfix took them in. Postfix hands mails to Dovecot in parallel, so two sent a moment apart may get
 * their UIDs the other way round; its long queue ids (in each mail's Received header) start with the time
 * it took the mail, to the microsecond, and sort by it.
 */
export async function mailboxOf(servers: MailServers, who: { user: string; pass: string }): Promise<Stored[]> {
  const client = new ImapFlow({ host: "127.0.0.1", port: servers.imapPort, secure: false, auth: who, logger: false });
  await client.connect();
  const lock = await client.getMailboxLock("INBOX");
  const out: Stored[] = [];
  try {
    if ((client.mailbox && client.mailbox.exists) || 0) {
      for await (const m of client.fetch("1:*", { uid: true, flags: true, source: true })) {
        if (m.source) out.push({ uid: m.uid, seen: m.flags?.has("\\Seen") ?? false, mail: await simpleParser(m.source) });
      }
    }
  } finally {
    lock.release();
    await client.logout();
  }
  const taken = out.map((s) => queueIdOf(s.mail));
  if (taken.some((id) => id === undefined)) return out;
  return out
    .map((s, i) => ({ s, id: taken[i] as string }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map(({ s }) => s);
}

/** The queue id Postfix gave a mail when it took it (`… (Postfix) with ESMTPSA id <id>`). */
function queueIdOf(mail: ParsedMail): string | undefined {
  const received = ([] as unknown[]).concat(mail.headers.get("received") ?? []);
  for (const line of received) {
    const id = /\(Postfix\) with \S+ id (\w+)/.exec(String(line))?.[1];
    if (id) return id;
  }
  return undefined;
}

/** Empties a user's INBOX, so that each test starts from no mail. */
export async function emptyMailbox(servers: MailServers, who: { user: string; pass: string }): Promise<void> {
  const client = new ImapFlow({ host: "127.0.0.1", port: servers.imapPort, secure: false, auth: who, logger: false });
  await client.connect();
  const lock = await client.getMailboxLock("INBOX");
  try {
    if (client.mailbox && client.mailbox.exists) await client.messageDelete("1:*");
  } finally {
    lock.release();
    await client.logout();
  }
}

/** Waits until `read` gives a value `done` accepts (mail delivery takes a moment), or fails naming `what`. */
export async function waitForMail<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; last seen: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 200));
    value = await read();
  }
  return value;
}
