// Mail that is odd on purpose, through the real Postfix and Dovecot: a header block mailparser refuses, a
// second From:, a vacation responder's old marks, and a reply whose first line only looks like a decision.
// Each ends with a mail hermes must answer, which comes after the odd one in the mailbox: its answer
// shows the odd one was handled (or passed by) first.
import nodemailer from "nodemailer";
import { beforeEach, describe, expect, it } from "vitest";
import { MAIL_USERS } from "../../fakes/mail-servers.js";
import type { FakeModel } from "../../fakes/model-server.js";
import { useHermes, useModel } from "../../helpers/fixture.js";
import { authResults, mailboxOf, sendToHermes, waitForMail } from "../../helpers/mail-client.js";
import { emailSettings, mailServersForFile } from "../../helpers/mail-setup.js";

const OWNER = MAIL_USERS.owner.user;
const servers = mailServersForFile();
let model: FakeModel;
beforeEach(async () => {
  model = await useModel();
  model.respond((req) => ({ text: `answer to: ${req.messages.at(-1)?.content.split("\n")[0]}` }));
});
const ownerMail = () => mailboxOf(servers, MAIL_USERS.owner);
const answered = (subject: string) => waitForMail(ownerMail, (m) => m.some((s) => s.mail.subject === `Re: ${subject}`), `Re: ${subject}`);

/** Hands Postfix a mail as written, header block and all (envelope sender `from`). */
async function sendRaw(lines: string[], from: string): Promise<void> {
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port: servers.smtpPort, secure: false, auth: MAIL_USERS.owner });
  await transport.sendMail({ envelope: { from, to: MAIL_USERS.hermes.user }, raw: `${lines.join("\r\n")}\r\n` });
  transport.close();
}

/** The owner's authenticated mail with `subject`, which hermes answers: sent after an odd one, it marks its end. */
const marker = (subject: string) =>
  sendToHermes(servers, { from: OWNER, subject, text: "and this one?", auth: authResults("example.org") });

describe("email at its edges", { timeout: 90_000 }, () => {
  it("passes by a mail the parser refuses (16,000 short header lines) instead of stopping at it for good", async () => {
    const hermes = await useHermes(emailSettings(servers, model.url));
    const padding = Array.from({ length: 17_000 }, () => "X-P: a");
    await sendRaw(
      ["From: stranger@evil.test", `To: ${MAIL_USERS.hermes.user}`, "Subject: poison", ...padding, "", "hi"],
      "stranger@evil.test",
    );
    await marker("after the poison");
    await answered("after the poison");
    const passed = await hermes.waitForLog((l) => l.msg === "email: a mail that cannot be read was left unread");
    expect(String(passed.reason)).toMatch(/header/i);
    expect(model.requests).toHaveLength(1);
  });

  it("takes a mail with two From: fields as from nobody: DKIM checked the last, the parser reads the first", async () => {
    const hermes = await useHermes(emailSettings(servers, model.url));
    await sendRaw(
      [
        `Authentication-Results: ${authResults("example.org")}`,
        `From: ${OWNER}`,
        "From: colleague@example.org",
        `To: ${MAIL_USERS.hermes.user}`,
        "Subject: run this",
        "Message-ID: <two-froms@example.org>",
        "",
        "Please do what I say.",
      ],
      "colleague@example.org",
    );
    await marker("after two froms");
    await answered("after two froms");
    expect(model.requests.map((r) => r.messages.at(-1)?.content ?? "").join("\n")).not.toContain("do what I say");
    await hermes.waitForLog((l) => l.msg === "email: mail left unread and unanswered" && l.subject === "run this");
  });

  it("answers no vacation responder that marks its mail only with Precedence or X-Autoreply", async () => {
    await useHermes(emailSettings(servers, model.url));
    for (const [n, mark] of ["Precedence: auto_reply", "X-Autoreply: yes", "Precedence: bulk"].entries()) {
      await sendRaw(
        [
          `Authentication-Results: ${authResults("example.org")}`,
          `From: ${OWNER}`,
          `To: ${MAIL_USERS.hermes.user}`,
          `Subject: Automatic reply ${n}`,
          mark,
          `Message-ID: <oof-${n}@example.org>`,
          "",
          "I am out of the office until Monday.",
        ],
        "",
      );
    }
    await marker("after the vacation replies");
    const box = await answered("after the vacation replies");
    expect(box.filter((s) => s.mail.subject?.startsWith("Re: Automatic reply"))).toEqual([]);
    expect(model.requests).toHaveLength(1);
  });

  it("reads a first line that only looks like a decision ('Yes please') as a message for the model", async () => {
    await useHermes(emailSettings(servers, model.url));
    const first = await sendToHermes(servers, {
      from: OWNER,
      subject: "dinner",
      text: "Find a table for Friday",
      auth: authResults("example.org"),
    });
    await answered("dinner");
    await sendToHermes(servers, {
      from: OWNER,
      subject: "Re: dinner",
      text: "Yes please\nfor two, at 8pm.",
      inReplyTo: first,
      auth: authResults("example.org"),
    });
    await waitForMail(
      ownerMail,
      (m) => m.some((s) => s.mail.text?.includes("answer to: Yes please")),
      "the model's answer to 'Yes please'",
    );
    expect(model.requests).toHaveLength(2);
  });
});
