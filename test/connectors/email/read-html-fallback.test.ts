/**
 * The HTML read for a mail whose text part is empty (8a05e3c): html-to-text as called there runs table cells
 * together ("Departs10:40"), and, called without mailparser's nesting limit, a deeply nested HTML body throws
 * (a stack overflow): the mail is then left unread and unanswered, where mailparser itself reads such HTML.
 */
import { describe, expect, it } from "vitest";
import { readMail } from "../../../connectors/email/read.js";

const mail = (html: string) =>
  Buffer.from(
    [
      "From: me@example.org",
      "Subject: trip",
      "MIME-Version: 1.0",
      'Content-Type: multipart/alternative; boundary="b"',
      "",
      "--b",
      "Content-Type: text/plain; charset=utf-8",
      "",
      "",
      "--b",
      "Content-Type: text/html; charset=utf-8",
      "",
      html,
      "--b--",
    ].join("\r\n"),
  );

describe("a mail read from its HTML", () => {
  it("keeps the cells of a table apart", async () => {
    const read = await readMail(
      mail("<p>Book this one:</p><table><tr><td>Departs</td><td>10:40</td></tr><tr><td>Gate</td><td>B12</td></tr></table>"),
    );
    expect(read.text).toMatch(/Departs\s+10:40/);
    expect(read.text).toMatch(/Gate\s+B12/);
  });

  it("is read, not refused, when its HTML is nested deeply", async () => {
    const depth = 5000;
    // Was: RangeError (Maximum call stack size exceeded), which leaves the mail unread and unanswered.
    await expect(readMail(mail(`<p>Please call Bob.</p>${"<div>".repeat(depth)}x${"</div>".repeat(depth)}`))).resolves.toMatchObject({
      text: expect.stringContaining("Please call Bob."),
    });
  });
});
