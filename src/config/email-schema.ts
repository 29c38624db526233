import { z } from "./zod.js";

const server = (port: number) => ({
  host: z.string().default(""),
  port: z.int().min(1).max(65535).default(port),
  /** true: TLS from the first byte (993, 465); false: STARTTLS when the server offers it (143, 587). */
  secure: z.boolean().default(true),
  user: z.string().default(""),
  pass: z.string().default(""),
});

/** `connectors.email` (SPEC §18): a mailbox read by IMAP, answered by SMTP. Off by default. */
export const emailSchema = () =>
  z
    .strictObject({
      enabled: z.boolean().default(false),
      /** The From: of everything hermes sends, and the address people write to. */
      address: z.string().default(""),
      imap: z
        .strictObject({
          ...server(993),
          mailbox: z.string().min(1).default("INBOX"),
          /**
           * Seconds between looks for new mail where the server has no IDLE; with IDLE, new mail is told at
           * once and a look every max(poll_seconds, 60) only catches what a dropped notice missed.
           */
          poll_seconds: z.int().min(1).max(3600).default(60),
        })
        .prefault({}),
      smtp: z.strictObject(server(465)).prefault({}),
      /** Who may write: addresses, or `@domain` for a whole domain. Case does not matter. */
      allowed_senders: z.array(z.string().regex(/^([^@\s]+@[^@\s]+|@[^@\s]+)$/, "expected an address or @domain")).default([]),
      /**
       * authentication-results: a message counts only when the receiving server's Authentication-Results says
       * dkim=pass or spf=pass for the From domain. none: From: alone, which anyone can forge (doctor warns).
       */
      trust: z.enum(["authentication-results", "none"]).default("authentication-results"),
      /** The receiving server's id in that header; empty: the topmost header, whoever wrote it. */
      authserv_id: z.string().default(""),
    })
    .superRefine((email, ctx) => {
      if (!email.enabled) return;
      const need = (path: string[], value: string, what: string) => {
        if (!value) ctx.addIssue({ code: "custom", path, message: `expected ${what} (connectors.email is enabled)` });
      };
      need(["address"], email.address, "the mailbox's address");
      need(["imap", "host"], email.imap.host, "the IMAP server's host");
      need(["smtp", "host"], email.smtp.host, "the SMTP server's host");
      if (!email.allowed_senders.length)
        ctx.addIssue({ code: "custom", path: ["allowed_senders"], message: "expected at least one address or @domain that may write" });
    })
    .prefault({});

export type EmailConfig = z.output<ReturnType<typeof emailSchema>>;
