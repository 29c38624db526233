import { describe, expect, it } from "vitest";
import { MAIL_USERS } from "../../fakes/mail-servers.js";
import { useHermes, useModel } from "../../helpers/fixture.js";
import { authResults, mailboxOf, sendToHermes, waitForMail } from "../../helpers/mail-client.js";
import { emailSettings, emailStatus, mailServersForFile } from "../../helpers/mail-setup.js";

const OWNER = MAIL_USERS.owner.user;

// A Dovecot that does not offer IDLE: new mail is told only in answer to a command.
const servers = mailServersForFile({ idle: false });

const ownerMail = () => mailboxOf(servers, MAIL_USERS.owner);
const hermesMail = () => mailboxOf(servers, MAIL_USERS.hermes);

describe("email from a server without IDLE", { timeout: 90_000 }, () => {
  it("takes new mail within imap.poll_seconds, each message once", async () => {
    const model = await useModel();
    model.respond((req) => ({ text: `answer to ${req.messages.at(-1)?.content.split("\n")[0]}` }));
    const hermes = await useHermes(emailSettings(servers, model.url, { email: { imap: { poll_seconds: 1 } } }));
    const status = await waitForMail(
      () => emailStatus(hermes),
      (s) => s?.ok === true,
      "email healthy",
    );
    expect(status.detail).toContain("INBOX open, polling every 1 s (the server has no IDLE)");
    // Mail that comes after the first look: only a poll finds it. Without one it would wait for the
    // 60 s sweep or imapflow's 2-minute NOOP, past these deadlines.
    for (const subject of ["first", "second", "third"]) {
      await sendToHermes(servers, { from: OWNER, subject, text: "news", auth: authResults("example.org") });
      await waitForMail(ownerMail, (m) => m.some((s) => s.mail.subject === `Re: ${subject}`), `the reply to ${subject}`, 10_000);
    }
    const box = await ownerMail();
    expect(box.map((s) => s.mail.text?.trim())).toEqual(["answer to first", "answer to second", "answer to third"]);
    expect(model.requests.length).toBe(3);
    await waitForMail(hermesMail, (m) => m.length === 3 && m.every((s) => s.seen), "the three mails marked seen");
  });
});
