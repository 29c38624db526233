/**
 * Email as a connector plugin (SPEC §18), written against the public SDK only: each correspondent's
 * address is a chat, mail in is read by IMAP (./imap.ts), replies go out by SMTP (./smtp.ts). The mail
 * libraries are imported when the connector starts, so a hermes without email never loads them.
 */
import { parseApprovalButton } from "../sdk/buttons.js";
import type { ConnectorHost, ConnectorPlugin, Connector as PluginConnector } from "../sdk/types.js";
import { takeAttachments } from "./attachments.js";
import { createMailbox, type RawMail } from "./imap.js";
import { type EmailOptions, emailOptions } from "./options.js";
import { readMail } from "./read.js";
import { createSender, type Thread } from "./smtp.js";
import { untrustedReason } from "./trust.js";

/** A mail may be long; the flow splits anything longer into several mails. */
const TEXT_LIMIT = 100_000;

export function createEmail(host: ConnectorHost, options: EmailOptions): PluginConnector {
  const sender = createSender(options);
  let sendFault: string | undefined;
  const threadKey = (chat: string) => `thread:${chat.toLowerCase()}`;

  const handle = async (raw: RawMail): Promise<"take" | "leave"> => {
    // Judged by its headers first: the body of a mail that does not count is never fetched or parsed.
    const head = await readMail(raw.headers);
    const where = { uid: raw.uid, from: head.from, subject: head.subject };
    if (head.from && head.from === options.address.toLowerCase()) return "leave";
    if (head.automatic) {
      host.log.info(where, "email: an automatic mail (a bounce or an auto-reply) left unread");
      return "leave";
    }
    const reason = untrustedReason(options, head.from, head.headers);
    if (reason || !head.from) {
      host.log.warn({ ...where, reason }, "email: mail left unread and unanswered");
      return "leave";
    }
    const mail = await readMail(await raw.source());
    // The same headers, read again with the body: a From that changed between the two fetches counts for nothing.
    if (mail.from !== head.from) return "leave";
    const chat = head.from;
    const decision = /^\s*(yes|no)\s+(\S+)\s*$/i.exec(mail.text.split("\n")[0] ?? "");
    if (decision?.[1] && decision[2]) {
      const button = `${decision[1].toLowerCase() === "yes" ? "approve" : "deny"}:${decision[2]}`;
      await host.press({ chat, user: chat, button });
      return "take";
    }
    const thread: Thread = { subject: mail.subject, messageId: mail.messageId, references: mail.references };
    if (mail.messageId) host.state.set(threadKey(chat), JSON.stringify(thread));
    // Files only now: nothing of a stranger's or a forged mail is written anywhere.
    const files = await takeAttachments(mail.attachments, options.files_root);
    if (files.refusals.length) await tellSender(chat, files.refusals.join("\n"), thread);
    // A mail that was nothing but files none of which could be taken has nothing left for the model.
    if (files.refusals.length && !files.kept && !mail.hasBody) return "take";
    await host.receive({
      chat,
      user: chat,
      text: [mail.text, ...files.notes].filter(Boolean).join("\n\n"),
      id: mail.messageId || `${raw.uidValidity}:${raw.uid}`,
      userName: mail.fromName,
    });
    return "take";
  };

  /** A reply that is not the model's (a file refused), threaded like any other. A failure is logged, not retried. */
  const tellSender = async (chat: string, text: string, thread: Thread) => {
    try {
      await sender.send({ to: chat, text, thread });
    } catch (err) {
      host.log.warn(
        { to: chat, err: String((err as Error).message ?? err) },
        "email: could not tell the sender about a refused attachment",
      );
    }
  };

  const mailbox = createMailbox(options, host.state, host.log, handle);

  return {
    start: () => mailbox.start(),
    async stop() {
      await mailbox.stop();
      sender.close();
    },
    health() {
      const h = mailbox.health();
      if (sendFault) return { ok: false, detail: `${h.detail}; SMTP: ${sendFault}` };
      return h;
    },
    async send(chat, message) {
      const saved = host.state.get(threadKey(chat));
      const thread = saved ? (JSON.parse(saved) as Thread) : undefined;
      try {
        const sent = await sender.send({ to: chat, text: withDecisionHint(message.text, message.buttons), thread });
        sendFault = undefined;
        return sent;
      } catch (err) {
        sendFault = `${options.smtp.host}:${options.smtp.port}: ${String((err as Error).message ?? err)}`;
        throw err;
      }
    },
    limits: { text: TEXT_LIMIT, buttons: true },
  };
}

/**
 * Mail has no buttons: an approval request says what to reply, with the approval's id as the code. Only
 * the decisions the buttons offer are named (a request too long to show whole offers no Approve).
 */
function withDecisionHint(text: string, buttons: { id: string }[] | undefined): string {
  const offered = buttons?.flatMap((b) => parseApprovalButton(b.id) ?? []) ?? [];
  const code = offered[0]?.approvalId;
  if (!code) return text;
  if (!offered.some((d) => d.approve)) return `${text}\n\nReply with this as the first line to refuse it:\n\n    no ${code}`;
  return `${text}\n\nReply with this as the first line to allow it:\n\n    yes ${code}\n\nor to refuse it:\n\n    no ${code}`;
}

const plugin: ConnectorPlugin<EmailOptions> = {
  api: 1,
  optionsSchema: emailOptions,
  create: createEmail,
};

export default plugin;
