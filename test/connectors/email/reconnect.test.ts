import { describe, expect, it } from "vitest";
import { MAIL_USERS } from "../../fakes/mail-servers.js";
import { useHermes, useModel } from "../../helpers/fixture.js";
import { authResults, mailboxOf, sendToHermes, waitForMail } from "../../helpers/mail-client.js";
import { emailSettings, emailStatus, mailServersForFile } from "../../helpers/mail-setup.js";

const OWNER = MAIL_USERS.owner.user;
const HERMES = MAIL_USERS.hermes;

const servers = mailServersForFile();

const ownerMail = () => mailboxOf(servers, MAIL_USERS.owner);

async function start() {
  const model = await useModel();
  model.respond((req) => ({ text: `answer to ${req.messages.at(-1)?.content.split("\n")[0]}` }));
  const hermes = await useHermes(emailSettings(servers, model.url));
  await waitForMail(
    () => emailStatus(hermes),
    (s) => s?.ok === true && /IDLE/.test(s.detail),
    "email waiting in IDLE",
  );
  return { model, hermes };
}

/** Sends a mail and waits for its reply; the replies so far. */
async function roundTrip(subject: string) {
  await sendToHermes(servers, { from: OWNER, subject, text: "news", auth: authResults("example.org") });
  return waitForMail(ownerMail, (m) => m.some((s) => s.mail.subject === `Re: ${subject}`), `the reply to ${subject}`);
}

describe("email when the IMAP connection drops", { timeout: 90_000 }, () => {
  it("reconnects after the server closes its IDLE, and answers the mail that came meanwhile once", async () => {
    const { model, hermes } = await start();
    await servers.kick(HERMES.user);
    await hermes.waitForLog((l) => /the IMAP connection dropped/.test(String(l.msg)));
    await roundTrip("during");
    const back = await waitForMail(
      () => emailStatus(hermes),
      (s) => s?.ok === true,
      "email healthy again",
    );
    expect(back.detail).toContain("waiting in IDLE");
    const box = await roundTrip("after");
    expect(box.map((s) => s.mail.text?.trim())).toEqual(["answer to during", "answer to after"]);
    expect(model.requests.length).toBe(2);
  });

  it("says the login is refused after the password changed, and takes the mail held meanwhile once it is right again", async () => {
    const { model, hermes } = await start();
    servers.setPassword(HERMES.user, "rotated");
    await servers.kick(HERMES.user);
    const refused = await waitForMail(
      () => emailStatus(hermes),
      (s) => s?.ok === false && /refused/.test(s.detail),
      "the refused login in health",
    );
    expect(refused.detail).toContain("the IMAP login for hermes@example.org was refused");
    expect(refused.detail).not.toContain(HERMES.pass);
    await sendToHermes(servers, { from: OWNER, subject: "held", text: "news", auth: authResults("example.org") });
    // Delivered and waiting, unseen: nobody has taken it.
    const held = await waitForMail(
      () => mailboxOf(servers, { user: HERMES.user, pass: "rotated" }),
      (m) => m.length === 1,
      "the mail in hermes' mailbox",
    );
    expect(held[0]?.seen).toBe(false);
    expect(model.requests.length).toBe(0);
    servers.setPassword(HERMES.user, HERMES.pass);
    await waitForMail(ownerMail, (m) => m.some((s) => s.mail.subject === "Re: held"), "the reply to the held mail", 30_000);
    expect((await emailStatus(hermes)).ok).toBe(true);
    const box = await roundTrip("after");
    expect(box.map((s) => s.mail.text?.trim())).toEqual(["answer to held", "answer to after"]);
    expect(model.requests.length).toBe(2);
  });
});
