/**
 * Real mail servers for the email tests: Debian's Dovecot (IMAP, LMTP, auth) and a second Postfix instance
 * (SMTP with SASL through Dovecot's auth, delivering example.org by LMTP to Dovecot), each started from temp
 * configs on free ports of 127.0.0.1 and stopped after. Nothing is skipped: without the packages a test fails
 * with the command that installs them.
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";

/** Postfix's master.cf, read from the sources whether this runs from test/ (vitest) or dist/test/ (the benchmark). */
const MASTER_CF = join(
  import.meta.dirname,
  import.meta.dirname.includes(`${sep}dist${sep}`) ? "../../../test/fakes" : ".",
  "mail-master.cf",
);
const INSTALL = "apt-get install dovecot-imapd dovecot-lmtpd postfix (as root; .ci/run does it)";

/** The mailboxes the servers hold: the assistant's, the owner's and a stranger's (all at example.org). */
export const MAIL_USERS = {
  hermes: { user: "hermes@example.org", pass: "hermespw" },
  owner: { user: "me@example.org", pass: "mepw" },
  stranger: { user: "stranger@example.org", pass: "strangerpw" },
} as const;

/** An address of the domain whose mail Postfix refuses at RCPT (554), as a server answers for a mailbox it will not take. */
export const REFUSED_RECIPIENT = "refused@example.org";

export interface MailServers {
  dir: string;
  imapPort: number;
  smtpPort: number;
  /** Stops Dovecot (IMAP, LMTP and auth go down), as a crash or a maintenance would. */
  stopImap(): Promise<void>;
  startImap(): Promise<void>;
  /** Closes `user`'s IMAP connections from the server side (`doveadm kick`), as a server restart or a timeout would. */
  kick(user: string): Promise<void>;
  /** Changes `user`'s password (Dovecot reads its password file again at the next login), as an owner rotating it would. */
  setPassword(user: string, pass: string): void;
  stop(): Promise<void>;
}

export interface MailServerOptions {
  /** false: Dovecot leaves IDLE out of its capabilities, as some servers and proxies do. */
  idle?: boolean;
}

/** What Dovecot 2.3 offers after login, less IDLE. */
const CAPABILITIES_WITHOUT_IDLE =
  "IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE SORT UNSELECT CHILDREN NAMESPACE UIDPLUS ESEARCH MOVE LITERAL+";

/** Starts Dovecot and Postfix for one test file. Throws, naming the packages to install, when they are missing. */
export async function startMailServers(options: MailServerOptions = {}): Promise<MailServers> {
  for (const bin of ["/usr/sbin/dovecot", "/usr/sbin/postfix", "/usr/bin/doveadm"]) {
    if (!existsSync(bin)) throw new Error(`the email tests need ${bin}: ${INSTALL}`);
  }
  if (process.getuid?.() !== 0) throw new Error("the email tests start dovecot and postfix, which needs root");
  const dir = mkdtempSync(join(tmpdir(), "hermes-mail-"));
  // Dovecot reads and writes the maildirs as user `mail` (it refuses uid 0 for mail access).
  chmodSync(dir, 0o755);
  const [imapPort, lmtpPort, authPort, smtpPort] = await freePorts(4);
  const ports = { imapPort, lmtpPort, authPort, smtpPort } as Ports;
  const passwords = new Map<string, string>(Object.values(MAIL_USERS).map((u) => [u.user, u.pass]));
  writeConfigs(dir, ports, options);
  writeUsers(dir, passwords);
  const dovecotConf = join(dir, "dovecot.conf");
  const postfixDir = join(dir, "postfix");
  const startImap = async () => {
    await runOrExplain("/usr/sbin/dovecot", ["-c", dovecotConf], join(dir, "dovecot.log"));
    await waitForPort(ports.imapPort, join(dir, "dovecot.log"));
    await waitForPort(ports.authPort, join(dir, "dovecot.log"));
  };
  const stopImap = async () => {
    await runOrExplain("/usr/bin/doveadm", ["-c", dovecotConf, "stop"], "").catch(() => undefined);
    await waitForClosed(ports.imapPort);
  };
  await startImap();
  try {
    await runOrExplain("/usr/sbin/postfix", ["-c", postfixDir, "start"], join(dir, "postfix.log"));
    await waitForPort(ports.smtpPort, join(dir, "postfix.log"));
  } catch (err) {
    await stopImap();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir,
    imapPort: ports.imapPort,
    smtpPort: ports.smtpPort,
    stopImap,
    startImap,
    async kick(user) {
      await runOrExplain("/usr/bin/doveadm", ["-c", dovecotConf, "kick", user], join(dir, "dovecot.log"));
    },
    setPassword(user, pass) {
      passwords.set(user, pass);
      writeUsers(dir, passwords);
    },
    async stop() {
      await runOrExplain("/usr/sbin/postfix", ["-c", postfixDir, "stop"], "").catch(() => undefined);
      await stopImap();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Ports {
  imapPort: number;
  lmtpPort: number;
  authPort: number;
  smtpPort: number;
}

function writeUsers(dir: string, passwords: Map<string, string>): void {
  const users = [...passwords].map(([user, pass]) => `${user}:{PLAIN}${pass}::::::`).join("\n");
  writeFileSync(join(dir, "users"), `${users}\n`);
}

function writeConfigs(dir: string, p: Ports, options: MailServerOptions): void {
  mkdirSync(join(dir, "mail"), { mode: 0o755 });
  chmodSync(join(dir, "mail"), 0o777);
  writeFileSync(
    join(dir, "dovecot.conf"),
    `base_dir = ${dir}/run
state_dir = ${dir}/run
instance_name = hermes-test-${p.imapPort}
listen = 127.0.0.1
protocols = imap lmtp
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:${dir}/mail/%u
mail_uid = mail
mail_gid = mail
first_valid_uid = 1
log_path = ${dir}/dovecot.log
${options.idle === false ? `imap_capability = ${CAPABILITIES_WITHOUT_IDLE}\n` : ""}passdb {
  driver = passwd-file
  args = ${dir}/users
}
userdb {
  driver = static
  args = uid=mail gid=mail home=${dir}/mail/%u
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${p.imapPort}
  }
  inet_listener imaps {
    port = 0
  }
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = ${p.lmtpPort}
  }
}
service auth {
  unix_listener auth-userdb {
    mode = 0600
  }
  inet_listener auth-inet {
    address = 127.0.0.1
    port = ${p.authPort}
  }
}
service anvil {
  chroot =
}
`,
  );
  const pf = join(dir, "postfix");
  mkdirSync(pf);
  mkdirSync(join(dir, "pfdata"));
  // postfix-script makes the queue's subdirectories, not the queue directory itself.
  mkdirSync(join(dir, "pfq"), { mode: 0o755 });
  // Postfix insists its data directory belongs to its own user.
  chmodSync(join(dir, "pfdata"), 0o700);
  writeFileSync(
    join(pf, "main.cf"),
    `compatibility_level = 3.6
queue_directory = ${dir}/pfq
data_directory = ${dir}/pfdata
mail_owner = postfix
setgid_group = postdrop
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
myhostname = mail.example.org
mydomain = example.org
myorigin = example.org
mydestination =
mynetworks = 127.0.0.0/8
relayhost =
virtual_mailbox_domains = example.org
virtual_transport = lmtp:inet:127.0.0.1:${p.lmtpPort}
smtpd_sasl_auth_enable = yes
smtpd_sasl_type = dovecot
smtpd_sasl_path = inet:127.0.0.1:${p.authPort}
smtpd_relay_restrictions = permit_sasl_authenticated, reject_unauth_destination
smtpd_recipient_restrictions = check_recipient_access inline:{ ${REFUSED_RECIPIENT}=REJECT }, permit_sasl_authenticated, reject_unauth_destination
alias_maps =
alias_database =
smtpd_tls_security_level = none
smtp_tls_security_level = none
# Room for a mail carrying a file over the 20 MB hermes takes (base64 makes it a third larger).
message_size_limit = 40000000
# Queue ids that start with the time a mail was taken (test/helpers/mail-client.ts orders a mailbox by them).
enable_long_queue_ids = yes
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 2s
# Postfix logs to syslog by default, absent here: a failure before its master starts would be silent.
maillog_file = ${dir}/postfix.log
maillog_file_prefixes = ${tmpdir()}
`,
  );
  const master = readFileSync(MASTER_CF, "utf8").replace("SMTP_PORT", String(p.smtpPort));
  writeFileSync(join(pf, "master.cf"), master);
  execFileSync("chown", ["postfix", join(dir, "pfdata")]);
}

/** Runs a server's start command; its daemons keep no pipe of ours open (they would hold the call until they exit). */
async function runOrExplain(bin: string, args: string[], logFile: string): Promise<void> {
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(bin, args, { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", resolve);
  });
  if (code === 0) return;
  const log = existsSync(logFile) ? readFileSync(logFile, "utf8").slice(-2000) : "(no log)";
  throw new Error(`${bin} ${args.join(" ")} exited with ${code}:\n${log}`);
}

async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<import("node:net").Server>((resolve) => {
          const s = createServer();
          s.listen(0, "127.0.0.1", () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function waitForPort(port: number, logFile: string): Promise<void> {
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    if (await connects(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  const log = existsSync(logFile) ? readFileSync(logFile, "utf8").slice(-2000) : "(no log)";
  throw new Error(`port ${port} did not open within 15 s:\n${log}`);
}

async function waitForClosed(port: number): Promise<void> {
  const until = Date.now() + 15_000;
  while (Date.now() < until && (await connects(port))) await new Promise((r) => setTimeout(r, 50));
}
