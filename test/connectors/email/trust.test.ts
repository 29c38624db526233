import { describe, expect, it } from "vitest";
import { newText, plainFromMarkdown, replySubject } from "../../../connectors/email/text.js";
import { authenticationResults, senderAllowed, untrustedReason } from "../../../connectors/email/trust.js";

const opts = { allowed_senders: ["me@example.org", "@family.net"], trust: "authentication-results" as const, authserv_id: "" };
const headers = (...ar: string[]) =>
  [...ar.map((a) => `Authentication-Results: ${a}`), "From: Me <me@example.org>", "Subject: x"].join("\r\n");

describe("who may write", () => {
  it("matches addresses and @domains without regard to case, and nothing else", () => {
    expect(senderAllowed(opts.allowed_senders, "ME@Example.org")).toBe(true);
    expect(senderAllowed(opts.allowed_senders, "kid@family.net")).toBe(true);
    expect(senderAllowed(opts.allowed_senders, "kid@evil-family.net")).toBe(false);
    expect(senderAllowed(opts.allowed_senders, "you@example.org")).toBe(false);
  });

  it("trusts the topmost Authentication-Results, or only those of authserv_id, for the From domain", () => {
    expect(untrustedReason(opts, "me@example.org", headers("mx.example.org; dkim=pass header.d=example.org"))).toBeUndefined();
    expect(untrustedReason(opts, "me@example.org", headers("mx.example.org; spf=pass smtp.mailfrom=me@example.org"))).toBeUndefined();
    // A pass for another domain, a fail, or a pass only in a lower (sender-supplied) header does not count.
    expect(untrustedReason(opts, "me@example.org", headers("mx.example.org; dkim=pass header.d=other.org"))).toMatch(/neither/);
    expect(
      untrustedReason(opts, "me@example.org", headers("mx; dkim=fail header.d=example.org", "mx; dkim=pass header.d=example.org")),
    ).toMatch(/neither/);
    expect(untrustedReason(opts, "me@example.org", "From: me@example.org")).toMatch(/no Authentication-Results/);
    const byId = { ...opts, authserv_id: "mx.example.org" };
    expect(untrustedReason(byId, "me@example.org", headers("evil.net; dkim=pass header.d=example.org"))).toMatch(/by mx.example.org/);
    expect(
      untrustedReason(byId, "me@example.org", headers("mx.example.org (comment); dkim=pass (good) header.d=example.org")),
    ).toBeUndefined();
    expect(untrustedReason({ ...opts, trust: "none" }, "me@example.org", "")).toBeUndefined();
    expect(untrustedReason({ ...opts, trust: "none" }, "x@example.org", "")).toMatch(/not in allowed_senders/);
  });
});

describe("reading Authentication-Results", () => {
  const owner = { allowed_senders: ["owner@example.org"], trust: "authentication-results" as const, authserv_id: "mx.example.org" };
  const trusted = (...ar: string[]) => untrustedReason(owner, "owner@example.org", headers(...ar)) === undefined;

  it("is not fooled by a sender's address echoed in a comment or a value", () => {
    // The envelope sender's quoted local part holds `)` and `;`: the server echoes it, the text is no result.
    expect(
      trusted(
        'mx.example.org; spf=pass (mx.example.org: domain of "x);dkim=pass header.d=example.org;(y"@attacker.test designates 1.2.3.4 as permitted sender) smtp.mailfrom=attacker.test',
      ),
    ).toBe(false);
    expect(trusted('mx.example.org; spf=pass smtp.mailfrom="x;dkim=pass header.d=example.org"@attacker.test')).toBe(false);
    expect(trusted('mx.example.org; spf=pass smtp.mailfrom="owner@example.org"@attacker.test')).toBe(false);
    expect(trusted('mx.example.org; spf=pass smtp.mailfrom="x" @example.org')).toBe(false);
    expect(trusted("mx.example.org; dkim=pass header.d=attacker.test header.d=example.org")).toBe(false);
    expect(trusted("mx.example.org; dkim=pass header.d=example.org.attacker.test; spf=pass smtp.mailfrom=x@notexample.org")).toBe(false);
  });

  it("trusts what honest servers write", () => {
    expect(trusted("mx.example.org; dkim=pass header.d=example.org")).toBe(true);
    expect(trusted("mx.example.org; spf=pass smtp.mailfrom=owner@example.org")).toBe(true);
    expect(trusted("mx.example.org; spf=pass smtp.mailfrom=example.org")).toBe(true);
    expect(trusted("MX.Example.org; DKIM=Pass header.D=Example.ORG")).toBe(true);
    expect(trusted("mx.example.org 1; dkim=pass (1024-bit key; unprotected) header.d=example.org header.s=sel header.b=Ab+/cd12")).toBe(
      true,
    );
    expect(trusted('mx.example.org; dkim=pass header.i=@example.org; spf=pass smtp.mailfrom="o w"@example.org')).toBe(true);
    expect(trusted("mx.example.org; dmarc=pass (p=none dis=none) header.from=example.org")).toBe(true);
    // Gmail's shape, folded over three lines, and a none before it.
    expect(
      trusted(
        "mx.example.org;\r\n\tdkim=none;\r\n       spf=pass (mx.example.org: domain of owner@example.org designates 2a00:1450::1 as permitted sender)" +
          " smtp.mailfrom=owner@example.org; dmarc=fail (p=NONE sp=NONE dis=NONE) header.from=example.org",
      ),
    ).toBe(true);
    // Fastmail's shape: many results, properties without a type, comments with `=` and `,`.
    expect(
      trusted(
        "mx.example.org; arc=none (no signatures found); dkim=pass (2048-bit rsa key sha256) header.d=example.org header.i=@example.org" +
          " header.b=Bzv0Plce header.a=rsa-sha256 header.s=fm1 x-bits=2048; dmarc=pass policy.published-domain-policy=none" +
          " (p=none,d=none,d.eval=none) policy.policy-from=p header.from=example.org; iprev=pass smtp.remote-ip=1.2.3.4 (mail.example.org)",
      ),
    ).toBe(true);
    expect(trusted("mx.example.org; none")).toBe(false);
    expect(trusted('mx.example.org; dkim=pass reason="bad \\"sig\\"" header.d=other.org; spf=fail smtp.mailfrom=example.org')).toBe(false);
  });

  it("reads nested comments, quoted strings and backslash escapes", () => {
    expect(trusted("mx.example.org (a (nested; comment) here); dkim=pass (x (y) \\) z) header.d=example.org")).toBe(true);
    expect(trusted('mx.example.org; spf=pass (a (b "c)" d) e) smtp.mailfrom="a\\"b;c"@example.org')).toBe(true);
    expect(trusted('mx.example.org; spf=pass smtp.mailfrom="a\\";dkim=pass header.d=example.org;\\""@attacker.test')).toBe(false);
    expect(trusted("mx.example.org; spf=pass (nested (x); dkim=pass header.d=example.org; more) smtp.mailfrom=attacker.test")).toBe(false);
    const [only] = authenticationResults(headers('"mx.example.org" (id) 1; dkim/1=pass (ok) header.d="example.org"'));
    expect(only?.authservId).toBe("mx.example.org");
    expect(only?.results.map((r) => [r.method, r.result])).toEqual([["dkim", "pass"]]);
  });

  it("takes a header it cannot read as vouching for nothing, and does not throw", () => {
    for (const garbage of [
      'mx.example.org; dkim=pass header.d=example.org; spf=pass smtp.mailfrom="x',
      "mx.example.org; dkim=pass header.d=example.org (unclosed",
      "mx.example.org; dkim=pass header.d=example.org; x)",
      "mx.example.org; dkim=pass header.d=example.org \\",
      "mx.example.org; dkim=pass header.d=example.org; ((((",
      "mx.example.org; dkim=pass header.d=example.org extra",
      "mx.example.org; dkim=pass header.d",
      "mx.example.org; dkim==pass header.d=example.org",
      "mx.example.org; =pass header.d=example.org",
      '"mx.example.org; dkim=pass header.d=example.org',
      "",
      ";;;",
    ]) {
      expect(trusted(garbage), garbage).toBe(false);
    }
    // An unreadable header on top still is the topmost: the sender's own header below it does not move up.
    const topmost = { ...owner, authserv_id: "" };
    expect(
      untrustedReason(
        topmost,
        "owner@example.org",
        headers('mx.example.org; spf=pass smtp.mailfrom="x', "mx.example.org; dkim=pass header.d=example.org"),
      ),
    ).toMatch(/neither/);
  });
});

describe("mail text", () => {
  it("keeps what was just written and drops quotes and signatures", () => {
    expect(newText("Yes, do it.\n\nOn Tue, 2 Dec 2026, hermes <h@x.org> wrote:\n> shall I?\n")).toBe("Yes, do it.");
    expect(newText("Fine.\n-- \nJane\n")).toBe("Fine.");
    expect(newText("Fine.\n\n-----Original Message-----\nFrom: x\n")).toBe("Fine.");
    expect(newText("> only a quote\n")).toBe("> only a quote");
  });

  it("makes Markdown readable as plain text, and does not stack Re:", () => {
    expect(plainFromMarkdown("# Today\n**Rain** at `9`, see [map](https://m.example)\n* one")).toBe(
      "TODAY\n*Rain* at 9, see map <https://m.example>\n- one",
    );
    expect(replySubject("Re: plans")).toBe("Re: plans");
    expect(replySubject("plans")).toBe("Re: plans");
  });
});
