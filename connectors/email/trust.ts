/**
 * Who may write to hermes by mail. From: is whatever the sender typed, so with `trust:
 * authentication-results` a message counts only when the receiving server vouches for its From domain.
 */

export interface TrustOptions {
  allowed_senders: string[];
  trust: "authentication-results" | "none";
  authserv_id: string;
}

/** Whether an address is in `allowed_senders` (an address, or `@domain` for the whole domain; case-blind). */
export function senderAllowed(allowed: string[], address: string): boolean {
  const from = address.trim().toLowerCase();
  const domain = from.slice(from.lastIndexOf("@") + 1);
  return allowed.some((entry) => {
    const e = entry.trim().toLowerCase();
    return e.startsWith("@") ? e.slice(1) === domain : e === from;
  });
}

/** Why a message does not count, or undefined when it does. `headers` is the raw header block. */
export function untrustedReason(options: TrustOptions, from: string | undefined, headers: string): string | undefined {
  if (!from) return "no single From: address";
  if (!senderAllowed(options.allowed_senders, from)) return `sender ${from} is not in allowed_senders`;
  if (options.trust === "none") return undefined;
  const domain = from.slice(from.lastIndexOf("@") + 1).toLowerCase();
  const results = authenticationResults(headers);
  // The receiving server adds its header on top; lower ones came with the message and prove nothing. With
  // authserv_id set, only headers by that server count (a sender may add one naming another server).
  const vouching = options.authserv_id ? results.filter((r) => r.authservId === options.authserv_id.toLowerCase()) : results.slice(0, 1);
  if (!vouching.length) {
    return options.authserv_id
      ? `no Authentication-Results by ${options.authserv_id}`
      : "no Authentication-Results header (the receiving server must add one)";
  }
  if (vouching.some((r) => passesFor(r.body, domain))) return undefined;
  return `Authentication-Results show neither dkim=pass nor spf=pass for ${domain}`;
}

interface Result {
  authservId: string;
  body: string;
}

/** Every Authentication-Results header, topmost first, unfolded, comments dropped. */
export function authenticationResults(headers: string): Result[] {
  const unfolded = headers.replace(/\r?\n[ \t]+/g, " ");
  const out: Result[] = [];
  for (const line of unfolded.split(/\r?\n/)) {
    const match = /^authentication-results:\s*(.*)$/i.exec(line);
    if (!match?.[1]) continue;
    const value = match[1].replace(/\([^)]*\)/g, " ").toLowerCase();
    const [id = "", ...rest] = value.split(";");
    out.push({ authservId: id.trim().split(/\s+/)[0] ?? "", body: rest.join(";") });
  }
  return out;
}

/** dkim=pass signed by the domain (or a parent of it), or spf=pass for an envelope sender in it. */
function passesFor(body: string, domain: string): boolean {
  const matches = (d: string) => d === domain || domain.endsWith(`.${d}`);
  for (const part of body.split(";")) {
    const method = /^\s*(dkim|spf|dmarc)\s*=\s*(\w+)/.exec(part);
    if (!method || method[2] !== "pass") continue;
    const prop = (name: string) => new RegExp(`\\b${name}\\s*=\\s*"?([^\\s";]+)`).exec(part)?.[1];
    if (method[1] === "dkim") {
      const d = prop("header\\.d") ?? prop("header\\.i")?.replace(/^.*@/, "");
      if (d && matches(d)) return true;
    } else if (method[1] === "spf") {
      const sender = prop("smtp\\.mailfrom") ?? prop("smtp\\.helo");
      if (sender && matches(sender.replace(/^.*@/, ""))) return true;
    } else {
      const d = prop("header\\.from");
      if (d && matches(d)) return true;
    }
  }
  return false;
}
