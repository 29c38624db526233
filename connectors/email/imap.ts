/**
 * The mailbox side: one IMAP connection that waits in IDLE (or, on a server without IDLE, asks every
 * `imap.poll_seconds`), takes each new message once and hands it on. On a dropped connection, a server
 * that is down or a refused login it says so in its health and reconnects with a growing pause.
 */
import type { ImapFlow } from "imapflow";
import type { HostLog } from "../sdk/types.js";
import type { EmailOptions } from "./options.js";

/**
 * A message as the mailbox gives it: its UID, its header block, and its raw source, fetched only when
 * asked for, so a stranger's or a forged mail (however large) is judged by its headers alone.
 */
export interface RawMail {
  uid: number;
  uidValidity: string;
  headers: Buffer;
  source(): Promise<Buffer>;
}

/** What becomes of a message: taken (marked seen) or left unread. Throws: left for the next pass. */
export type Handler = (mail: RawMail) => Promise<"take" | "leave">;

export interface MailboxState {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
}

const BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000];
/** With IDLE, a pass now and then besides its news: a missed EXISTS costs at most this long. */
const SWEEP_MS = 60_000;

export interface Mailbox {
  /**
   * Starts connecting and resolves at once: neither a slow or unreachable mail server nor loading imapflow
   * holds up the daemon's READY. Mail that comes meanwhile is taken by the first pass after the login.
   */
  start(): Promise<void>;
  stop(): Promise<void>;
  health(): { ok: boolean; detail: string };
}

export function createMailbox(options: EmailOptions, state: MailboxState, log: HostLog, handle: Handler): Mailbox {
  const { imap } = options;
  let stopped = false;
  let client: ImapFlow | undefined;
  let health = { ok: false, detail: "connecting" };
  let wake: (() => void) | undefined;
  let loop: Promise<void> | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  /** Takes every unseen message above the cursor, in order. One pass at a time. */
  let passing: Promise<void> = Promise.resolve();
  const pass = (c: ImapFlow) => {
    passing = passing
      .then(() => takeNew(c))
      .catch((err: unknown) => log.warn({ err: String(err) }, "email: a pass over the mailbox failed"));
    return passing;
  };

  const takeNew = async (c: ImapFlow) => {
    const mailbox = c.mailbox;
    if (!mailbox || stopped) return;
    const validity = String(mailbox.uidValidity);
    // A new UIDVALIDITY means the old UIDs name nothing: start again from what is unseen.
    let last = state.get("uidvalidity") === validity ? Number(state.get("uid") ?? 0) : 0;
    const uids = ((await c.search({ seen: false, uid: `${last + 1}:*` }, { uid: true })) || [])
      .filter((u) => u > last)
      .sort((a, b) => a - b);
    for (const uid of uids) {
      if (stopped) return;
      const head = await c.fetchOne(String(uid), { headers: true }, { uid: true });
      if (!head || !head.headers) continue;
      const source = async () => {
        const whole = await c.fetchOne(String(uid), { source: true }, { uid: true });
        if (!whole || !whole.source) throw new Error(`mail ${uid} has no source`);
        return whole.source;
      };
      const verdict = await handle({ uid, uidValidity: validity, headers: head.headers, source });
      if (verdict === "take") await c.messageFlagsAdd(String(uid), ["\\Seen"], { uid: true });
      last = uid;
      state.set("uidvalidity", validity);
      state.set("uid", String(last));
    }
  };

  const connectOnce = async (onReady: () => void) => {
    const { ImapFlow } = await import("imapflow");
    if (stopped) return;
    const c = new ImapFlow({
      host: imap.host,
      port: imap.port,
      secure: imap.secure,
      auth: { user: imap.user, pass: imap.pass },
      logger: false,
      // A server that goes quiet is noticed within a few minutes instead of a TCP timeout's hours.
      maxIdleTime: 5 * 60_000,
      // Back to IDLE right after a pass (imapflow waits 15 s by default): new mail is told at once.
      autoIdleDelay: 100,
    });
    client = c;
    c.on("error", (err: unknown) => log.warn({ err: String(err) }, "email: IMAP connection error"));
    const closed = new Promise<void>((resolve) => c.once("close", () => resolve()));
    await c.connect();
    const lock = await c.getMailboxLock(imap.mailbox);
    lock.release();
    // Stopped while connecting: stop() found no connection to close yet.
    if (stopped) return void (await c.logout().catch(() => c.close()));
    const hasIdle = c.capabilities.has("IDLE");
    const how = hasIdle ? "waiting in IDLE" : `polling every ${imap.poll_seconds} s (the server has no IDLE)`;
    health = { ok: true, detail: `${imap.user}@${imap.host}: ${imap.mailbox} open, ${how}` };
    onReady();
    c.on("exists", () => void pass(c));
    // Without IDLE the server tells of new mail only in answer to a command: a NOOP asks, then a pass takes.
    const look = () =>
      void (hasIdle
        ? pass(c)
        : c.noop().then(
            () => pass(c),
            () => undefined,
          ));
    const timer = setInterval(look, hasIdle ? Math.max(SWEEP_MS, imap.poll_seconds * 1000) : imap.poll_seconds * 1000);
    await pass(c);
    await closed;
    clearInterval(timer);
  };

  const run = async () => {
    let attempt = 0;
    while (!stopped) {
      try {
        await connectOnce(() => {
          attempt = 0;
        });
        if (!stopped) {
          health = { ok: false, detail: `${imap.host}: the IMAP connection dropped; reconnecting` };
          log.warn({ host: imap.host }, "email: the IMAP connection dropped; reconnecting");
        }
      } catch (err) {
        health = { ok: false, detail: describe(err, options) };
        log.warn({ err: String(err) }, `email: ${health.detail}`);
      }
      client?.close();
      if (stopped) break;
      const wait = BACKOFF_MS[Math.min(attempt++, BACKOFF_MS.length - 1)] ?? 60_000;
      health = { ok: false, detail: `${health.detail}; retrying in ${wait / 1000} s` };
      await sleep(wait);
    }
  };

  return {
    async start() {
      loop = run();
    },
    async stop() {
      stopped = true;
      wake?.();
      await client?.logout().catch(() => client?.close());
      await loop;
    },
    health: () => health,
  };
}

/** One line for health: what failed and, for a refused login, what to check. */
function describe(err: unknown, options: EmailOptions): string {
  const e = err as { authenticationFailed?: boolean; code?: string; message?: string };
  if (e.authenticationFailed)
    return `${options.imap.host}: the IMAP login for ${options.imap.user} was refused; check imap.user and imap.pass (an app password for a provider)`;
  if (e.code === "ECONNREFUSED" || e.code === "ENOTFOUND" || e.code === "ETIMEDOUT")
    return `${options.imap.host}:${options.imap.port}: the IMAP server cannot be reached (${e.code})`;
  return `${options.imap.host}: IMAP failed: ${e.message ?? String(err)}`;
}
