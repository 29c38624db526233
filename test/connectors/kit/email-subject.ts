/**
 * The built-in email connector as a conformance-kit subject, against real Dovecot (IMAP) and Postfix (SMTP)
 * from test/fakes/mail-servers.ts: the driver sends mail to hermes by SMTP as the kit's users and reads
 * what hermes sent from their mailboxes. A chat is a correspondent's address, so each chat has one user.
 */
import nodemailer from "nodemailer";
import { type KitSubject, OWNER, STRANGER } from "../../../connectors/kit/subject.js";
import type { SentMessage } from "../../../connectors/sdk/types.js";
import { MAIL_USERS, type MailServers, REFUSED_RECIPIENT } from "../../fakes/mail-servers.js";
import { AUTHSERV, authResults, emptyMailbox, mailboxOf } from "../../helpers/mail-client.js";

const ADDRESSES: Record<string, string> = { [OWNER]: MAIL_USERS.owner.user, [STRANGER]: MAIL_USERS.stranger.user };
/** The email connector's limits.text (connectors/email/index.ts). */
const EMAIL_LIMIT = 100_000;

export function emailSubject(servers: MailServers): KitSubject {
  return {
    name: "email",
    profile: {
      strangerNotice:
        "mail from anyone not allowed is left unread and never answered, since a notice would be backscatter to whatever address a sender forged",
      textApprovals: "not applicable: mail always asks approvals with a code, decided by a reply `yes <code>` or `no <code>`",
      failedSendHealth: /failed: .*Recipient address rejected/,
      // Mail goes through Postfix, LMTP and Dovecot before IMAP tells hermes of it.
      settleMs: 1500,
      pollMs: 200,
    },
    async open({ control }) {
      for (const who of [MAIL_USERS.hermes, MAIL_USERS.owner, MAIL_USERS.stranger]) await emptyMailbox(servers, who);
      const transport = nodemailer.createTransport({ host: "127.0.0.1", port: servers.smtpPort, secure: false, auth: MAIL_USERS.owner });
      /** A chat's address: the user who first wrote in it (the owner's by default); the failing chat's is refused by Postfix. */
      const chats = new Map<string, string>();
      const addressOf = (chat: string, user = OWNER) => {
        if (chat === control.failSendTo) return REFUSED_RECIPIENT;
        if (!chats.has(chat)) chats.set(chat, ADDRESSES[user] ?? MAIL_USERS.owner.user);
        return chats.get(chat) as string;
      };
      /** Who a mail is from: the owner writes from the chat's address, anyone else from their own. */
      const senderOf = (chat: string, user: string) => {
        const address = addressOf(chat, user);
        return user === OWNER ? address : (ADDRESSES[user] ?? user);
      };
      const written = new Map<string, string>();
      const key = (chat: string, user: string, text: string) => JSON.stringify([chat, user, text]);
      const requests = new Map<string, SentMessage & { subject: string }>();
      const mail = async (from: string, subject: string, text: string, extra: Record<string, unknown> = {}) => {
        const info = await transport.sendMail({
          from,
          to: MAIL_USERS.hermes.user,
          subject,
          text,
          headers: { "Authentication-Results": authResults("example.org") },
          ...extra,
        });
        return info.messageId as string;
      };
      const sent = async (chat: string) => {
        const address = addressOf(chat);
        const who = Object.values(MAIL_USERS).find((u) => u.user === address);
        if (!who) return [];
        const shown = (await mailboxOf(servers, who)).map((s) => ({
          ...shownMail(s.mail.messageId ?? "", s.mail.text ?? ""),
          subject: s.mail.subject ?? "",
        }));
        for (const m of shown) for (const b of m.buttons ?? []) requests.set(b.id, m);
        return shown.map(({ subject: _, ...m }) => m);
      };
      return {
        connectors: {
          email: {
            enabled: true,
            address: MAIL_USERS.hermes.user,
            imap: { host: "127.0.0.1", port: servers.imapPort, secure: false, ...MAIL_USERS.hermes },
            smtp: { host: "127.0.0.1", port: servers.smtpPort, secure: false, ...MAIL_USERS.hermes },
            allowed_senders: [MAIL_USERS.owner.user, REFUSED_RECIPIENT],
            authserv_id: AUTHSERV,
          },
        },
        driver: {
          setup: () => ({ options: {} }),
          async inbound({ chat, user, text }) {
            // The subject is the first line, as a person writing a fresh mail would put it.
            written.set(key(chat, user, text), await mail(senderOf(chat, user), text.split("\n")[0] ?? "", text));
          },
          // A button is a reply whose first line is its id (`yes <code>`), from the presser's own address.
          async press({ chat, user, button }) {
            const request = requests.get(button);
            const thread = request ? { inReplyTo: request.id, references: [request.id] } : {};
            await mail(senderOf(chat, user), `Re: ${request?.subject ?? "approval"}`, `${button}\n`, thread);
          },
          sent,
          teardown: () => transport.close(),
        },
        limits: () => ({ text: EMAIL_LIMIT, buttons: true, edits: false }),
        userId: (user) => ADDRESSES[user] ?? user,
        chatId: (chat) => addressOf(chat),
        // The same mail (the same Message-ID) arriving again, as a resent or re-filtered mail would.
        async redeliver(chat, user, text) {
          const messageId = written.get(key(chat, user, text));
          if (!messageId) throw new Error(`nothing was written in chat ${chat} as "${text}"`);
          await mail(senderOf(chat, user), text.split("\n")[0] ?? "", text, { messageId });
        },
        async strangerLeftAlone() {
          const inbox = await mailboxOf(servers, MAIL_USERS.hermes);
          const taken = inbox.filter((s) => s.mail.from?.value[0]?.address === MAIL_USERS.stranger.user && s.seen);
          return taken.length ? `${taken.length} of the stranger's mails were marked seen instead of left unread` : undefined;
        },
      };
    },
  };
}

/** A mail hermes sent, as the kit sees a message: an approval request's codes are its two buttons. */
function shownMail(messageId: string, body: string): SentMessage {
  const text = body.trim();
  const code = /^\s*yes (\S+)\s*$/m.exec(text)?.[1];
  const refuse = /^\s*no (\S+)\s*$/m.exec(text)?.[1];
  if (!code || code !== refuse) return { id: messageId, text };
  return {
    id: messageId,
    text,
    buttons: [
      { id: `yes ${code}`, label: "Approve (reply yes)" },
      { id: `no ${code}`, label: "Deny (reply no)" },
    ],
  };
}
