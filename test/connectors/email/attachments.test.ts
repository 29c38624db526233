import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAIL_USERS } from "../../fakes/mail-servers.js";
import { useHermes, useModel } from "../../helpers/fixture.js";
import { authResults, mailboxOf, sendToHermes, waitForMail } from "../../helpers/mail-client.js";
import { emailSettings, mailServersForFile } from "../../helpers/mail-setup.js";

const OWNER = MAIL_USERS.owner.user;
const LIMIT = 20 * 1024 * 1024;

const FORWARDED = "From: shop@example.net\r\nTo: me@example.org\r\nSubject: Invoice 42\r\n\r\nPlease pay by Friday.\r\n";

const servers = mailServersForFile();

const ownerMail = () => mailboxOf(servers, MAIL_USERS.owner);
const inboxOf = (dir: string) => join(dir, "data/files/inbox");
const filesIn = (dir: string) => (existsSync(inboxOf(dir)) ? readdirSync(inboxOf(dir)).sort() : []);

async function start() {
  const model = await useModel();
  model.respond(() => ({ text: "got it" }));
  const hermes = await useHermes(emailSettings(servers, model.url));
  return { model, hermes };
}

describe("email attachments", { timeout: 90_000 }, () => {
  it("saves a trusted sender's attachments in the files inbox under safe names and tells the model what arrived", async () => {
    const { model, hermes } = await start();
    const pdf = Buffer.concat([Buffer.from("%PDF-1.4\n"), Buffer.from([0, 1, 2, 3, 255, 254])]);
    await sendToHermes(servers, {
      from: OWNER,
      subject: "File these",
      text: "Two notes and the report.",
      auth: authResults("example.org"),
      attachments: [
        { filename: "notes.txt", content: "first notes\n", contentType: "text/plain" },
        { filename: "notes.txt", content: "second notes\n", contentType: "text/plain" },
        { filename: "../../report.pdf", content: pdf, contentType: "application/pdf" },
        { filename: "Invoice.eml", content: FORWARDED, contentType: "message/rfc822" },
      ],
    });
    await waitForMail(ownerMail, (m) => m.length >= 1, "the reply");
    expect(filesIn(hermes.dir)).toEqual(["notes-2.txt", "notes.txt", "report.pdf"]);
    expect(readFileSync(join(inboxOf(hermes.dir), "notes.txt"), "utf8")).toBe("first notes\n");
    expect(readFileSync(join(inboxOf(hermes.dir), "notes-2.txt"), "utf8")).toBe("second notes\n");
    expect(readFileSync(join(inboxOf(hermes.dir), "report.pdf")).equals(pdf)).toBe(true);
    const said = model.requests.at(-1)?.messages.at(-1)?.content ?? "";
    expect(said).toMatch(/^File these\n\nTwo notes and the report\./);
    expect(said).toContain("[file received: saved as inbox/notes.txt in the files folder (12 bytes, text/plain); read_file can open it]");
    expect(said).toContain("saved as inbox/notes-2.txt");
    expect(said).toContain("saved as inbox/report.pdf in the files folder (15 bytes, application/pdf); it is not a text file");
    // A mail forwarded as an attachment reaches the model as text, after what the writer wrote.
    expect(said).toMatch(/Two notes and the report\.\n+From: shop@example\.net\nSubject: Invoice 42\n[\s\S]*Please pay by Friday\./);
    expect(model.requests.length).toBe(1);
  });

  it("writes nothing of a stranger's or a forged mail's attachments", async () => {
    const { model, hermes } = await start();
    const file = { filename: "payload.sh", content: "rm -rf ~\n", contentType: "text/x-sh" };
    await sendToHermes(servers, {
      from: "stranger@example.org",
      subject: "a",
      text: "x",
      auth: authResults("example.org"),
      attachments: [file],
    });
    await sendToHermes(servers, { from: OWNER, subject: "b", text: "x", auth: authResults("example.org", "fail"), attachments: [file] });
    // A genuine mail after them: once it is answered, the two before it have been looked at.
    await sendToHermes(servers, { from: OWNER, subject: "real", text: "the real one", auth: authResults("example.org") });
    const [only] = await waitForMail(ownerMail, (m) => m.length >= 1, "the reply to the genuine mail");
    expect(only?.mail.subject).toBe("Re: real");
    expect(filesIn(hermes.dir)).toEqual([]);
    expect(model.requests.length).toBe(1);
  });

  it("refuses a file over 20 MB as the other connectors do: the sender is told, the rest of the mail still reaches the model", async () => {
    const { model, hermes } = await start();
    const big = Buffer.alloc(LIMIT + 1, 0x61);
    await sendToHermes(servers, {
      from: OWNER,
      subject: "Backup",
      text: "The backup and its checksum.",
      auth: authResults("example.org"),
      attachments: [
        { filename: "backup.tar", content: big, contentType: "application/x-tar" },
        { filename: "backup.sha256", content: "abc123  backup.tar\n", contentType: "text/plain" },
      ],
    });
    const box = await waitForMail(ownerMail, (m) => m.length >= 2, "the refusal and the reply", 60_000);
    const refusal = box.find((s) => s.mail.text?.includes("backup.tar"))?.mail;
    expect(refusal?.subject).toBe("Re: Backup");
    expect(refusal?.text?.trim()).toBe("I could not take backup.tar: it is over 20 MB, the largest file I can take.");
    expect(box.filter((s) => s.mail.text?.includes("got it")).length).toBe(1);
    expect(filesIn(hermes.dir)).toEqual(["backup.sha256"]);
    const said = model.requests.at(-1)?.messages.at(-1)?.content ?? "";
    expect(said).toContain("The backup and its checksum.");
    expect(said).toContain("saved as inbox/backup.sha256");
    expect(said).toContain("[attachment backup.tar (20.0 MB, application/x-tar) not taken: over the 20 MB limit; the sender was told]");
    expect(model.requests.length).toBe(1);
  });

  it("answers a mail that is nothing but a refused file with the refusal alone", async () => {
    const { model } = await start();
    await sendToHermes(servers, {
      from: OWNER,
      subject: "video",
      auth: authResults("example.org"),
      attachments: [{ filename: "clip.mp4", content: Buffer.alloc(LIMIT + 1024), contentType: "video/mp4" }],
    });
    const [refusal] = await waitForMail(ownerMail, (m) => m.length >= 1, "the refusal", 60_000);
    expect(refusal?.mail.text).toContain("I could not take clip.mp4");
    // A later mail is answered, and it is the model's first request: the refused one reached no model.
    await sendToHermes(servers, { from: OWNER, subject: "next", text: "anything else?", auth: authResults("example.org") });
    await waitForMail(ownerMail, (m) => m.some((s) => s.mail.subject === "Re: next"), "the reply to the next mail");
    expect(model.requests.length).toBe(1);
    expect(model.requests[0]?.messages.at(-1)?.content).toContain("anything else?");
  });
});
