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
/** How many approval codes mailed to a correspondent are remembered (an approval waits at most hours). */
const KEPT_CODES = 50;

/** A mail the parser refused: this one mail is passed by, the mailbox goes on. */
class UnreadableMail extends Error {}

/** `work`, with any failure of it made an UnreadableMail. */
async function readable<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw new UnreadableMail(err instanceof Error ? err.message : String(err));
  }
}

/** How many of the latest mails taken a reply can still thread under. */
const THREADS_KEPT = 200;

export function createEmail(host: ConnectorHost, options: EmailOptions): PluginConnector {
  const sender = createSender(options);
  let sendFault: string | undefined;
  /**
   * What a reply to the inbound message `id` threads under (the mail with that id), for the last THREADS_KEPT
   * mails taken, in one state entry: a key per mail would grow the plugin's state by a row at every mail for
   * good. A reply to a mail older than those (a run waiting days for its approval) goes out as a new mail.
   */
  const threads = () => {
    try {
      return new Map(JSON.parse(host.state.get("threads") ?? "[]") as [string, Thread][]);
    } catch {
      return new Map<string, Thread>();
    }
  };
  const keepThread = (id: string, thread: Thread) => {
    const kept = threads();
    kept.delete(id);
    kept.set(id, thread);
    host.state.set("threads", JSON.stringify([...kept].slice(-THREADS_KEPT)));
  };

  // A mail that cannot be read (mailparser refuses it: 16,000 short header lines are enough) is logged and
  // passed by: thrown on, it would stop every pass over the mailbox at it, and no later mail would be read.
  const handle = async (raw: RawMail): Promise<"take" | "leave"> => {
    try {
      return await handleMail(raw);
    } catch (err) {
      if (!(err instanceof UnreadableMail)) throw err;
      host.log.warn({ uid: raw.uid, reason: err.message }, "email: a mail that cannot be read was left unread");
      return "leave";
    }
  };

  const handleMail = async (raw: RawMail): Promise<"take" | "leave"> => {
    // Judged by its headers first: the body of a mail that does not count is never fetched or parsed.
    const head = await readable(readMail(raw.headers));
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
    const source = await raw.source(); // IMAP trouble throws on: the pass fails and is tried again
    const mail = await readable(readMail(source));
    // The same headers, read again with the body: a From that changed between the two fetches counts for nothing.
    if (mail.from !== head.from) return "leave";
    const chat = head.from;
    // "yes <code>" / "no <code>" as the first line decides the approval this chat was sent that code for,
    // as `/approve <code>` would (whose answer, decided or not and why, is mailed back). A first line that
    // only looks so ("Yes please") is a message like any other.
    const decision = /^\s*(yes|no)\s+(\S+?)[.!]?\s*$/i.exec(mail.text.split("\n")[0] ?? "");
    const code = decision?.[2];
    const id = mail.messageId || `${raw.uidValidity}:${raw.uid}`;
    const thread: Thread = { subject: mail.subject, messageId: mail.messageId, references: mail.references };
    if (mail.messageId) keepThread(id, thread);
    if (decision?.[1] && code && sentCodes(chat).includes(code)) {
      await host.receive({
        chat,
        user: chat,
        text: `/${decision[1].toLowerCase() === "yes" ? "approve" : "deny"} ${code}`,
        id,
      });
      return "take";
    }
    // Files only now: nothing of a stranger's or a forged mail is written anywhere.
    const files = await takeAttachments(mail.attachments, options.files_root);
    if (files.refusals.length) await tellSender(chat, files.refusals.join("\n"), thread);
    // A mail that was nothing but files none of which could be taken has nothing left for the model.
    if (files.refusals.length && !files.kept && !mail.hasBody) return "take";
    await host.receive({
      chat,
      user: chat,
      text: [mail.text, ...files.notes].filter(Boolean).join("\n\n"),
      id,
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

  /** The approval codes mailed to `chat` lately, newest last: only those are decided by a reply. */
  const codesKey = (chat: string) => `codes:${chat.toLowerCase()}`;
  const sentCodes = (chat: string): string[] => {
    try {
      return JSON.parse(host.state.get(codesKey(chat)) ?? "[]") as string[];
    } catch {
      return [];
    }
  };
  const rememberCodes = (chat: string, buttons: { id: string }[] | undefined) => {
    const codes = buttons?.flatMap((b) => parseApprovalButton(b.id)?.approvalId ?? []) ?? [];
    if (codes.length) host.state.set(codesKey(chat), JSON.stringify([...new Set([...sentCodes(chat), ...codes])].slice(-KEPT_CODES)));
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
      rememberCodes(chat, message.buttons);
      // A reply threads under the mail it answers; a delivery that answers nothing (a job's result) is a new mail.
      const thread = message.replyTo === undefined ? undefined : threads().get(message.replyTo);
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
  get optionsSchema() {
    return emailOptions();
  },
  create: createEmail,
};

export default plugin;
