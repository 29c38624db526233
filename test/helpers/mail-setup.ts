/** What the email tests start: Dovecot and Postfix for a file, and a daemon whose email connector uses them. */
import { afterAll, beforeAll, beforeEach } from "vitest";
import { MAIL_USERS, type MailServerOptions, type MailServers, startMailServers } from "../fakes/mail-servers.js";
import { baseSettings, type Hermes } from "./hermes.js";
import { AUTHSERV, emptyMailbox } from "./mail-client.js";

/**
 * Dovecot and Postfix for the tests of the calling file: started before the first, stopped after the last.
 * Before each test hermes has its own password again and both its and the owner's INBOX are empty.
 * The object is filled in when the servers are up, so read it inside hooks and tests only.
 */
export function mailServersForFile(options: MailServerOptions = {}): MailServers {
  const servers = {} as MailServers;
  beforeAll(async () => {
    Object.assign(servers, await startMailServers(options));
  }, 60_000);
  afterAll(async () => {
    await servers.stop?.();
  });
  beforeEach(async () => {
    servers.setPassword(MAIL_USERS.hermes.user, MAIL_USERS.hermes.pass);
    await emptyMailbox(servers, MAIL_USERS.hermes);
    await emptyMailbox(servers, MAIL_USERS.owner);
  });
  return servers;
}

/** `connectors.email` pointing at the test servers: hermes' mailbox, the owner allowed, trust by AUTHSERV. */
export function emailConnector(servers: MailServers, extra: { imap?: Record<string, unknown> } & Record<string, unknown> = {}) {
  const { imap: imapExtra, ...rest } = extra;
  return {
    enabled: true,
    address: MAIL_USERS.hermes.user,
    imap: { host: "127.0.0.1", port: servers.imapPort, secure: false, ...MAIL_USERS.hermes, ...imapExtra },
    smtp: { host: "127.0.0.1", port: servers.smtpPort, secure: false, ...MAIL_USERS.hermes },
    allowed_senders: [MAIL_USERS.owner.user],
    authserv_id: AUTHSERV,
    ...rest,
  };
}

export interface EmailSettingsExtra {
  /** Merged into `connectors.email` (`imap` into its `imap`). */
  email?: Parameters<typeof emailConnector>[1];
  /** More connectors, or cron turned on. */
  connectors?: Record<string, unknown>;
  tools?: Record<string, unknown>;
}

/** A daemon's settings with the email connector on the test servers and cron off unless `connectors` says otherwise. */
export function emailSettings(servers: MailServers, modelUrl: string, extra: EmailSettingsExtra = {}) {
  return {
    ...baseSettings(modelUrl),
    ...(extra.tools && { tools: extra.tools }),
    connectors: { cron: { enabled: false }, email: emailConnector(servers, extra.email), ...extra.connectors },
  };
}

/** The email connector's line in `hermes status --json` (`ok`, `detail`), or undefined before it reports. */
export async function emailStatus(hermes: Hermes) {
  const { stdout } = await hermes.cli(["status", "--json"]);
  return JSON.parse(stdout).connectors?.find((c: { name: string }) => c.name === "email");
}
