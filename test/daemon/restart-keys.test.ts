import { describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/schema.js";
import { restartKeys } from "../../src/daemon/restart-keys.js";

const email = (imap: Record<string, unknown>, allowed = ["me@example.org"]) =>
  configSchema().parse({
    connectors: {
      email: {
        enabled: true,
        address: "hermes@example.org",
        imap: { host: "imap.example.org", ...imap },
        smtp: { host: "smtp.example.org" },
        allowed_senders: allowed,
      },
    },
  });

describe("the changes a reload cannot apply", () => {
  it("names a changed email setting, since the connector reads its options at start", () => {
    expect(restartKeys(email({ pass: "old" }), email({ pass: "new" }))).toEqual(["connectors.email.imap.pass"]);
    expect(restartKeys(email({}), email({}, ["me@example.org", "you@example.org"]))).toEqual(["connectors.email.allowed_senders"]);
    expect(restartKeys(email({ pass: "same" }), email({ pass: "same" }))).toEqual([]);
  });
});
