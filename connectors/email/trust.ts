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
  if (vouching.some((r) => passesFor(r.results, domain))) return undefined;
  return `Authentication-Results show neither dkim=pass nor spf=pass for ${domain}`;
}

/** dkim=pass signed by the domain (or a parent of it), spf=pass for an envelope sender in it, or dmarc=pass for it. */
function passesFor(results: ResInfo[], domain: string): boolean {
  const matches = (d: string | undefined) => {
    const found = d?.toLowerCase();
    return Boolean(found) && (found === domain || domain.endsWith(`.${found}`));
  };
  return results.some((r) => {
    if (r.result !== "pass") return false;
    if (r.method === "dkim") {
      const d = r.props.get("header.d");
      return matches(d ? plainText(d) : addressDomain(r.props.get("header.i")));
    }
    if (r.method === "spf") return matches(addressDomain(r.props.get("smtp.mailfrom") ?? r.props.get("smtp.helo")));
    if (r.method === "dmarc") {
      const from = r.props.get("header.from");
      return matches(from && plainText(from));
    }
    return false;
  });
}

/** A value as written: atoms and quoted strings (their content, unescaped) with nothing between them. */
type Word = { text: string; quoted: boolean }[];

type Token = { kind: "word"; parts: Word } | { kind: ";" } | { kind: "=" };

/** One method's verdict: `dkim=pass header.d=example.org` is method dkim, result pass, property header.d. */
interface ResInfo {
  method: string;
  result: string;
  props: Map<string, Word>;
}

interface Result {
  /** Lower case; "" when the header does not start with one. */
  authservId: string;
  /** Empty when the header cannot be read (an unclosed quote or comment): it then vouches for nothing. */
  results: ResInfo[];
}

/** Every Authentication-Results header, topmost first, unfolded and read as RFC 8601 and RFC 5322 write it. */
export function authenticationResults(headers: string): Result[] {
  const unfolded = headers.replace(/\r?\n[ \t]+/g, " ");
  const out: Result[] = [];
  for (const line of unfolded.split(/\r?\n/)) {
    const match = /^authentication-results:(.*)$/i.exec(line);
    // A header that cannot be read still takes its place: otherwise the one below it would count as topmost.
    if (match) out.push(readHeader(match[1] ?? ""));
  }
  return out;
}

function readHeader(value: string): Result {
  const { tokens, complete } = lex(value);
  const segments: Token[][] = [[]];
  for (const token of tokens) {
    if (token.kind === ";") segments.push([]);
    else segments.at(-1)?.push(token);
  }
  const [id = [], ...rest] = segments;
  // The authserv-id comes before any `;`, so an unreadable header may still say whose it is.
  const authservId = complete || segments.length > 1 ? readAuthservId(id) : "";
  if (!complete) return { authservId, results: [] };
  const results: ResInfo[] = [];
  for (const segment of rest) {
    const info = readResInfo(segment);
    if (info) results.push(info);
  }
  return { authservId, results };
}

/** `mx.example.org` or `mx.example.org 1` (a version); anything else names no server. */
function readAuthservId(segment: Token[]): string {
  const [id, version, ...more] = segment;
  if (id?.kind !== "word" || more.length) return "";
  if (version && !(version.kind === "word" && /^\d+$/.test(plainText(version.parts) ?? ""))) return "";
  return (plainText(id.parts) ?? "").toLowerCase();
}

/**
 * `method=result` and then `name=value` pairs (`header.d=example.org`, `reason="…"`), or undefined for
 * anything else: `none`, a stray word, a property given twice. Such a part says nothing, so it passes nothing.
 */
function readResInfo(segment: Token[]): ResInfo | undefined {
  const pairs: [string, Word][] = [];
  for (let i = 0; i < segment.length; i += 3) {
    const name = segment[i];
    const eq = segment[i + 1];
    const value = segment[i + 2];
    if (name?.kind !== "word" || eq?.kind !== "=" || value?.kind !== "word") return undefined;
    const key = atom(name.parts);
    if (!key) return undefined;
    pairs.push([key.toLowerCase(), value.parts]);
  }
  const [first, ...props] = pairs;
  const result = first && atom(first[1]);
  if (!first || !result) return undefined;
  const map = new Map<string, Word>();
  for (const [key, value] of props) {
    if (map.has(key)) return undefined;
    map.set(key, value);
  }
  // `dkim/1=pass`: a method may carry a version.
  return { method: first[0].replace(/\/\d+$/, ""), result: result.toLowerCase(), props: map };
}

/**
 * The header's words, `;` and `=`, with comments and white space dropped. `;` and `=` count only outside
 * quoted strings and comments, which nest and take backslash escapes. Unlike RFC 5322, a `"` inside a comment
 * opens a quoted string there too: servers echo the envelope address into comments (`domain of "a);b"@c`)
 * without escaping, and its `)` must not end the comment. `complete` is false for an unclosed quote or
 * comment, a stray `)` or a backslash outside them; `tokens` then holds what came before.
 */
function lex(value: string): { tokens: Token[]; complete: boolean } {
  const tokens: Token[] = [];
  let word: Word | undefined;
  let i = 0;
  const part = (text: string, quoted: boolean) => {
    if (!word) {
      word = [];
      tokens.push({ kind: "word", parts: word });
    }
    const last = word.at(-1);
    if (last && !last.quoted && !quoted) last.text += text;
    else word.push({ text, quoted });
  };
  /** Reads the quoted string opening at i; its content, or undefined when it never closes. */
  const quoted = (): string | undefined => {
    let text = "";
    for (i++; i < value.length; i++) {
      const c = value[i];
      if (c === '"') {
        i++;
        return text;
      }
      if (c === "\\") i++;
      if (i < value.length) text += value[i];
    }
    return undefined;
  };
  /** Skips the comment opening at i; false when it never closes. */
  const comment = (): boolean => {
    let depth = 0;
    while (i < value.length) {
      const c = value[i];
      if (c === '"') {
        if (quoted() === undefined) return false;
        continue;
      }
      if (c === "(") depth++;
      else if (c === ")") depth--;
      else if (c === "\\") i++;
      i++;
      if (depth === 0) return true;
    }
    return false;
  };
  while (i < value.length) {
    const c = value[i] ?? "";
    if (c === '"') {
      const text = quoted();
      if (text === undefined) return { tokens, complete: false };
      part(text, true);
    } else if (c === "(") {
      word = undefined;
      if (!comment()) return { tokens, complete: false };
    } else if (c === ")" || c === "\\") {
      return { tokens, complete: false };
    } else if (c === ";" || c === "=") {
      word = undefined;
      tokens.push({ kind: c });
      i++;
    } else if (/\s/.test(c)) {
      word = undefined;
      i++;
    } else {
      part(c, false);
      i++;
    }
  }
  return { tokens, complete: true };
}

/** An unquoted word's text (a method, a result, a property's name). */
function atom(word: Word): string | undefined {
  const [only, ...more] = word;
  return only && !only.quoted && !more.length ? only.text : undefined;
}

/** The text of a word that is one atom or one quoted string (`example.org`, `"example.org"`). */
function plainText(word: Word): string | undefined {
  const [only, ...more] = word;
  return only && !more.length ? only.text : undefined;
}

/**
 * The domain of an address value: after the last `@` outside quotes (`"a@b"@c.org` is c.org), or the value
 * itself when it has no `@` (`smtp.mailfrom=example.org`). A whole value in quotes is read as its content.
 */
function addressDomain(word: Word | undefined): string | undefined {
  const last = word?.at(-1);
  if (!word || !last) return undefined;
  if (word.length === 1) return last.text.slice(last.text.lastIndexOf("@") + 1);
  if (last.quoted || !last.text.includes("@")) return undefined;
  return last.text.slice(last.text.lastIndexOf("@") + 1);
}
