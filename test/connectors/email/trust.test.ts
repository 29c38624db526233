import { describe, expect, it } from "vitest";
import { newText, plainFromMarkdown, replySubject } from "../../../connectors/email/text.js";
import { senderAllowed, untrustedReason } from "../../../connectors/email/trust.js";

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
