import { nodeCrypto as crypto, secretBytes } from "../../src/random.js";
import type { Store } from "../../src/store/store.js";

const sha256 = (s: string | Buffer) => crypto().createHash("sha256").update(s).digest();

/** Constant-time equality of two secrets of any length: their hashes are compared. */
export function sameSecret(given: string, expected: string): boolean {
  return expected.length > 0 && crypto().timingSafeEqual(sha256(given), sha256(expected));
}

/** `Authorization: Bearer <token>` matches the configured token. */
export function bearerOk(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match !== null && sameSecret(match[1] as string, token);
}

/** GitHub's scheme: `X-Hub-Signature-256: sha256=<hex of HMAC-SHA256(secret, raw body)>`. */
export function signatureOk(header: string | undefined, secret: string, rawBody: Buffer): boolean {
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec((header ?? "").trim());
  if (!secret || !match) return false;
  const expected = crypto().createHmac("sha256", secret).update(rawBody).digest();
  return crypto().timingSafeEqual(Buffer.from((match[1] as string).toLowerCase(), "hex"), expected);
}

/**
 * Counts failed logins and bad tokens per client address: past `limit` in a minute the address gets 429
 * for wrong tokens until the minute is over; the right token is always let in, so nobody can lock the owner
 * out by failing from the owner's address. A guessed token is hopeless anyway; this keeps floods out of the log.
 */
export function createFailureLimiter(limit = 30, windowMs = 60_000) {
  const failures = new Map<string, { count: number; since: number }>();
  const current = (who: string) => {
    const entry = failures.get(who);
    if (!entry || Date.now() - entry.since > windowMs) return undefined;
    return entry;
  };
  return {
    blocked: (who: string) => (current(who)?.count ?? 0) >= limit,
    fail(who: string) {
      const entry = current(who) ?? { count: 0, since: Date.now() };
      entry.count++;
      failures.set(who, entry);
      if (failures.size > 10_000) failures.delete(failures.keys().next().value as string);
    },
  };
}

export interface DashboardSession {
  csrf: string;
  created: number;
}

export const SESSION_COOKIE = "hermes_session";
export const SESSION_MAX_AGE_S = 30 * 24 * 3600;
const SESSION_KEY = "http:session:";

/**
 * Dashboard logins. The cookie holds a random id; the store keeps only HMAC(token, id), so a copy of the
 * database cannot be turned into a cookie, and changing the token logs every browser out.
 */
export function createSessions(store: Store, token: () => string) {
  const keyOf = (id: string) => `${SESSION_KEY}${crypto().createHmac("sha256", token()).update(id).digest("hex")}`;
  return {
    create(): { id: string; session: DashboardSession } {
      // Logins past their age (and those a changed token ended) go as new ones come: the table does not grow for ever.
      store.inbound.removeValuesSetBefore(SESSION_KEY, Date.now() - SESSION_MAX_AGE_S * 1000);
      const id = secretBytes(32).toString("base64url");
      const session = { csrf: secretBytes(24).toString("base64url"), created: Date.now() };
      store.inbound.setValue(keyOf(id), JSON.stringify(session));
      return { id, session };
    },
    get(id: string | undefined): DashboardSession | undefined {
      if (!id || !/^[\w-]{20,100}$/.test(id)) return undefined;
      const raw = store.inbound.value(keyOf(id));
      if (!raw) return undefined;
      const session = JSON.parse(raw) as DashboardSession;
      return Date.now() - session.created < SESSION_MAX_AGE_S * 1000 ? session : undefined;
    },
    end(id: string | undefined): void {
      if (id) store.inbound.removeValue(keyOf(id));
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
