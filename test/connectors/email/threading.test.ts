/**
 * The email connector kept one thread per correspondent and put everything it sent under it: once the owner
 * had written, every briefing went out as "Re: <their last subject>", and of two mails taken together the
 * first's answer threaded under the second. A reply now threads under the mail its run answers.
 */
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
});
const ownerMail = () => mailboxOf(servers, MAIL_USERS.owner);

describe("threading of the mail hermes sends", { timeout: 90_000 }, () => {
  it("sends a scheduled briefing as a new mail, not as a reply to the last mail the owner wrote", async () => {
    model.respond((req) => ({
      text: String(req.messages.at(-1)?.content).includes("Morning briefing") ? "Good morning. Nothing due today." : "ok",
    }));
    const jobs = [{ name: "briefing", schedule: "0 7 * * *", prompt: "Morning briefing.", deliver: `email:${OWNER}` }];
    const hermes = await useHermes(emailSettings(servers, model.url, { connectors: { cron: { enabled: true, jobs } } }));
    const earlier = await sendToHermes(servers, {
      from: OWNER,
      subject: "Dentist",
      text: "Remind me later",
      auth: authResults("example.org"),
    });
    await waitForMail(ownerMail, (m) => m.length >= 1, "the reply");
    await hermes.cli(["schedules", "run", "briefing"]);
    const box = await waitForMail(ownerMail, (m) => m.length >= 2, "the briefing");
    const briefing = box.find((s) => s.mail.text?.includes("Good morning"))?.mail;
    expect(briefing?.subject).toBe("Good morning. Nothing due today.");
    expect(briefing?.inReplyTo).toBeUndefined();
    expect([briefing?.references ?? []].flat()).not.toContain(earlier);
  });

  it("threads each reply under the mail it answers when two mails come in together", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    model.respond((req) => {
      const first = String(req.messages.at(-1)?.content).includes("first question");
      // The first answer takes a while: the second mail comes in before it is sent.
      return { text: `answer to ${first ? "first" : "second"}`, ...(first && { gate }) };
    });
    await useHermes(emailSettings(servers, model.url));
    const first = await sendToHermes(servers, { from: OWNER, subject: "Alpha", text: "first question", auth: authResults("example.org") });
    await waitForMail(
      async () => model.requests.length,
      (n) => n >= 1,
      "the first mail reaching the model",
    );
    const second = await sendToHermes(servers, { from: OWNER, subject: "Beta", text: "second question", auth: authResults("example.org") });
    // The second mail is taken (marked seen) while the first is still being answered.
    await waitForMail(
      () => mailboxOf(servers, MAIL_USERS.hermes),
      (m) => m.length === 2 && m.every((s) => s.seen),
      "both mails taken",
    );
    release();
    const box = await waitForMail(ownerMail, (m) => m.length >= 2, "two replies");
    const toFirst = box.find((s) => s.mail.text?.includes("answer to first"))?.mail;
    expect(toFirst?.subject).toBe("Re: Alpha");
    expect(toFirst?.inReplyTo).toBe(first);
    expect(second).toBeTruthy();
  });
});

describe("threading after a restart", { timeout: 120_000 }, () => {
  it("threads the reply of a run that waited for approval across a restart under the mail it answers", async () => {
    model.respond((req) =>
      req.messages.at(-1)?.role === "tool"
        ? { text: "done after approval" }
        : { toolCalls: [{ name: "shell", arguments: { command: "echo watered >> plants.txt" } }] },
    );
    const hermes = await useHermes(emailSettings(servers, model.url, { tools: { enabled: ["clock", "shell"] } }));
    const asked = await sendToHermes(servers, {
      from: OWNER,
      subject: "Plants",
      text: "log that I watered",
      auth: authResults("example.org"),
    });
    const [request] = await waitForMail(ownerMail, (m) => m.length >= 1, "the approval request");
    const code = /^\s*yes (\S+)$/m.exec(request?.mail.text ?? "")?.[1];
    expect(code).toBeTruthy();
    await hermes.stop();
    await hermes.restart();
    await sendToHermes(servers, {
      from: OWNER,
      subject: "Re: Plants",
      text: `yes ${code}`,
      inReplyTo: request?.mail.messageId,
      auth: authResults("example.org"),
    });
    const box = await waitForMail(ownerMail, (m) => m.some((s) => s.mail.text?.includes("done after approval")), "the reply");
    const reply = box.find((s) => s.mail.text?.includes("done after approval"))?.mail;
    expect(reply?.subject).toBe("Re: Plants");
    expect(reply?.inReplyTo).toBe(asked);
  });
});
