/** What hermes doctor says of the email connector's trust settings. */
import { describe, expect, it } from "vitest";
import { checkEmail } from "../../src/cli/doctor-email.js";
import { configSchema } from "../../src/config/schema.js";

const withEmail = (email: Record<string, unknown>) =>
  configSchema().parse({
    connectors: {
      email: {
        enabled: true,
        address: "hermes@example.org",
        imap: { host: "imap.example.org" },
        smtp: { host: "smtp.example.org" },
        allowed_senders: ["owner@example.org"],
        ...email,
      },
    },
  });

describe("doctor on email trust", () => {
  it("warns of trust: none", () => {
    expect(checkEmail(withEmail({ trust: "none" }))).toEqual([
      expect.objectContaining({ outcome: "warn", detail: expect.stringMatching(/trust is none/) }),
    ]);
  });

  it("warns when no authserv_id says whose Authentication-Results count", () => {
    const [check] = checkEmail(withEmail({}));
    expect(check).toMatchObject({
      outcome: "warn",
      detail: expect.stringMatching(/authserv_id is empty/),
      fix: expect.stringMatching(/authserv_id/),
    });
  });

  it("passes Authentication-Results from a named server", () => {
    const [check] = checkEmail(withEmail({ authserv_id: "mx.example.org" }));
    expect(check).toMatchObject({
      outcome: "ok",
      detail: "mail from owner@example.org counts when mx.example.org's Authentication-Results vouch for it",
    });
  });
});
