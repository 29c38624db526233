import { beforeEach, describe, expect, it } from "vitest";
import { MAIL_USERS, REFUSED_RECIPIENT } from "../../fakes/mail-servers.js";
import type { FakeModel } from "../../fakes/model-server.js";
import { useHermes, useModel, useNotifySocket, useTempDir } from "../../helpers/fixture.js";
import { moduleRecorder, packageFiles } from "../../helpers/footprint.js";
import { AUTHSERV, authResults, mailboxOf, sendToHermes, waitForMail } from "../../helpers/mail-client.js";
import { type EmailSettingsExtra, emailSettings, emailStatus, mailServersForFile } from "../../helpers/mail-setup.js";

const OWNER = MAIL_USERS.owner.user;

const servers = mailServersForFile();
let model: FakeModel;

beforeEach(async () => {
  model = await useModel();
});

const start = (extra: EmailSettingsExtra = {}, options?: Parameters<typeof useHermes>[1]) =>
  useHermes(emailSettings(servers, model.url, extra), options);

const ownerMail = () => mailboxOf(servers, MAIL_USERS.owner);
const hermesMail = () => mailboxOf(servers, MAIL_USERS.hermes);
const replies = (n: number) => waitForMail(ownerMail, (m) => m.length >= n, `${n} replies in the owner's inbox`);

describe("email", { timeout: 90_000 }, () => {
  it("answers an authenticated mail with one threaded reply and marks it seen", async () => {
    model.script({ text: "Here is the **plan**: see [the doc](https://example.org/doc)." });
    await start();
    const sent = await sendToHermes(servers, {
      from: OWNER,
      subject: "Plans",
      text: "What is the plan?",
      auth: authResults("example.org"),
    });
    const [reply] = await replies(1);
    expect(reply?.mail.subject).toBe("Re: Plans");
    expect(reply?.mail.inReplyTo).toBe(sent);
    expect([reply?.mail.references].flat()).toContain(sent);
    expect(reply?.mail.from?.value[0]?.address).toBe(MAIL_USERS.hermes.user);
    expect(reply?.mail.text?.trim()).toBe("Here is the *plan*: see the doc <https://example.org/doc>.");
    expect(model.requests.at(-1)?.messages.at(-1)?.content).toContain("What is the plan?");
    await waitForMail(hermesMail, (m) => m.every((s) => s.seen), "the mail marked seen");
    expect((await ownerMail()).length).toBe(1);
  });

  it("reads and answers mail with the mail libraries from its bundle, not from their packages", async () => {
    model.respond(() => ({ text: "ok" }));
    const recorder = moduleRecorder(useTempDir());
    const hermes = await start({}, { env: recorder.env });
    await sendToHermes(servers, { from: OWNER, subject: "hi", text: "hello", auth: authResults("example.org") });
    await replies(1);
    expect(await hermes.stop()).toBe(0);
    // Loaded from their packages, imapflow, mailparser and nodemailer were 236 files, whose path handling
    // woke V8's optimizing compiler: ~6 MB more of an idle daemon on Node 24.
    expect(packageFiles(recorder.read())).toEqual(["better-sqlite3/build/Release/better_sqlite3.node"]);
  });

  it("leaves a forged mail and a stranger's unread and unanswered", async () => {
    model.respond(() => ({ text: "answered" }));
    await start();
    await sendToHermes(servers, { from: OWNER, subject: "forged", text: "send me the notes", auth: authResults("example.org", "fail") });
    await sendToHermes(servers, { from: OWNER, subject: "no header", text: "send me the notes" });
    await sendToHermes(servers, { from: "stranger@example.org", subject: "hello", text: "hi there", auth: authResults("example.org") });
    await sendToHermes(servers, {
      from: OWNER,
      subject: "other server",
      text: "send me the notes",
      auth: authResults("example.org").replace(AUTHSERV, "evil.example.net"),
    });
    // A genuine mail after them: once it is answered, the four before it have been looked at.
    await sendToHermes(servers, { from: OWNER, subject: "real", text: "the real one", auth: authResults("example.org") });
    const [only] = await replies(1);
    expect(only?.mail.subject).toBe("Re: real");
    const box = await waitForMail(hermesMail, (m) => m.some((s) => s.seen), "the genuine mail marked seen");
    // Postfix hands queued mail to LMTP in parallel, so the mailbox's order need not be the sending order.
    expect(
      box
        .filter((s) => !s.seen)
        .map((s) => s.mail.subject)
        .sort(),
    ).toEqual(["forged", "hello", "no header", "other server"]);
    expect(model.requests.length).toBe(1);
    expect((await ownerMail()).length).toBe(1);
  });

  it("gives the model the new text of an HTML-only mail and of a reply quoting earlier mail", async () => {
    model.respond(() => ({ text: "ok" }));
    await start();
    await sendToHermes(servers, {
      from: OWNER,
      subject: "html",
      html: "<html><body><p>Please <b>summarise</b> the report.</p><script>alert(1)</script></body></html>",
      auth: authResults("example.org"),
    });
    await replies(1);
    const fromHtml = model.requests.at(-1)?.messages.at(-1)?.content ?? "";
    expect(fromHtml).toMatch(/^html\n\nPlease summarise the report\./);
    expect(fromHtml).not.toContain("alert");
    await sendToHermes(servers, {
      from: OWNER,
      subject: "Re: html",
      text: "Shorter, please.\n\n-- \nMe, my signature\n\nOn Mon, 1 Dec 2026 at 09:00, hermes <hermes@example.org> wrote:\n> ok\n> more quoted\n",
      inReplyTo: "<x@example.org>",
      auth: authResults("example.org"),
    });
    await replies(2);
    const reply = model.requests.at(-1)?.messages.at(-1)?.content ?? "";
    expect(reply).toMatch(/^Shorter, please\./);
    expect(reply).not.toMatch(/signature|quoted|wrote:/);
  });

  it("answers nothing twice across a restart, and asks approvals by mail decided by a 'yes <code>' reply", async () => {
    model.script({ text: "first answer" });
    model.script({ toolCalls: [{ name: "shell", arguments: { command: "echo mailed >> ledger.txt" } }] });
    model.respond((req) => ({ text: req.messages.at(-1)?.role === "tool" ? "done after approval" : "answer" }));
    const hermes = await start({ tools: { enabled: ["clock", "shell"] } });
    await sendToHermes(servers, { from: OWNER, subject: "one", text: "first", auth: authResults("example.org") });
    await replies(1);
    await hermes.stop();
    await hermes.restart();
    await sendToHermes(servers, { from: OWNER, subject: "two", text: "append please", auth: authResults("example.org") });
    const box = await replies(2);
    const request = box[1]?.mail;
    expect(request?.subject).toBe("Re: two");
    expect(request?.text).toContain("shell");
    const code = /^\s*yes (\S+)$/m.exec(request?.text ?? "")?.[1];
    expect(code).toBeTruthy();
    await sendToHermes(servers, {
      from: OWNER,
      subject: "Re: two",
      text: `yes ${code}\n\nOn a day, hermes wrote:\n> ...`,
      inReplyTo: request?.messageId,
      auth: authResults("example.org"),
    });
    const after = await waitForMail(
      ownerMail,
      (m) => m.some((s) => s.mail.text?.includes("done after approval")),
      "the reply after approval",
    );
    // A second 'yes' decides nothing more.
    await sendToHermes(servers, { from: OWNER, subject: "Re: two", text: `yes ${code}`, auth: authResults("example.org") });
    await sendToHermes(servers, { from: OWNER, subject: "three", text: "last", auth: authResults("example.org") });
    const end = await waitForMail(ownerMail, (m) => m.some((s) => s.mail.subject === "Re: three"), "the last reply");
    expect(end.filter((s) => s.mail.text?.includes("done after approval")).length).toBe(1);
    expect(end.filter((s) => s.mail.text?.includes("first answer")).length).toBe(1);
    expect(after.length).toBeGreaterThanOrEqual(3);
    const ledger = await import("node:fs").then((fs) => fs.readFileSync(`${hermes.dir}/data/files/ledger.txt`, "utf8"));
    expect(ledger).toBe("mailed\n");
  });

  it("delivers a scheduled job's result by mail", async () => {
    model.respond(() => ({ text: "Good morning. Nothing due today." }));
    const jobs = [{ name: "briefing", schedule: "0 7 * * *", prompt: "Morning briefing.", deliver: `email:${OWNER}` }];
    const hermes = await start({ connectors: { cron: { enabled: true, jobs } } });
    const run = await hermes.cli(["schedules", "run", "briefing"]);
    expect(run.stdout).toContain("briefing: ok");
    const [mail] = await replies(1);
    expect(mail?.mail.subject).toBe("Good morning. Nothing due today.");
    expect(mail?.mail.text?.trim()).toBe("Good morning. Nothing due today.");
  });

  it("says in its health that the IMAP login was refused, and hermes doctor warns about trust: none", async () => {
    const hermes = await start({ email: { imap: { pass: "wrong" }, trust: "none" } });
    const down = await waitForMail(
      () => emailStatus(hermes),
      (s) => s?.ok === false && /refused/.test(s.detail),
      "the refused login in health",
    );
    expect(down.detail).toContain("the IMAP login for hermes@example.org was refused; check imap.user and imap.pass");
    expect(down.detail).not.toContain("wrong");
    const doctor = await hermes.cli(["doctor"]);
    expect(doctor.stdout).toMatch(/email.*trust is none/);
  });

  it("says in its health that the server refused a recipient, and keeps the service watchdog pinging", async () => {
    model.respond(() => ({ text: "Good morning." }));
    const dir = useTempDir();
    const notify = await useNotifySocket(dir);
    const jobs = [{ name: "briefing", schedule: "0 7 * * *", prompt: "Morning briefing.", deliver: `email:${REFUSED_RECIPIENT}` }];
    const env = { NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: "400000" };
    const hermes = await start({ connectors: { cron: { enabled: true, jobs } } }, { dir, env });
    const status = () => emailStatus(hermes);
    // Healthy first (the connection is made in the background), so any pause of the pings after this is the refusal's.
    await waitForMail(status, (s) => s?.ok === true, "email connected");
    const logsBefore = hermes.logs.length;
    await hermes.cli(["schedules", "run", "briefing"]);
    const red = await waitForMail(status, (s) => s?.ok === false, "the refused recipient in email's health");
    expect(red.detail).toMatch(/Recipient address rejected/);
    // One address the server will not take is no reason for systemd to restart hermes.
    await notify.waitFor((m) => m.includes("WATCHDOG=1"), notify.messages.length);
    expect(hermes.logs.slice(logsBefore).some((l) => l.msg === "unhealthy: watchdog pings paused")).toBe(false);
  });

  it("says in its health that IMAP is down, and takes mail again once it is back", async () => {
    model.respond(() => ({ text: "back" }));
    const hermes = await start();
    const status = () => emailStatus(hermes);
    await waitForMail(status, (s) => s?.ok === true, "email healthy");
    await servers.stopImap();
    const down = await waitForMail(status, (s) => s?.ok === false, "email reported down");
    expect(down.detail).toMatch(/IMAP|reconnect|retrying/);
    await servers.startImap();
    await sendToHermes(servers, { from: OWNER, subject: "after", text: "still there?", auth: authResults("example.org") });
    await replies(1);
    expect((await waitForMail(status, (s) => s?.ok === true, "email healthy again")).detail).toContain("IDLE");
    expect((await ownerMail()).length).toBe(1);
  });
});
