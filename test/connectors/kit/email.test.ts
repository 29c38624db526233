import { expect, it } from "vitest";
import { runSubject } from "../../../connectors/kit/run.js";
import { mailServersForFile } from "../../helpers/mail-setup.js";
import { emailSubject } from "./email-subject.js";

const servers = mailServersForFile();

it("the email connector passes the conformance kit against real Dovecot and Postfix", { timeout: 180_000 }, async () => {
  const report = await runSubject(emailSubject(servers));
  expect(report.results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
  expect(report.results.filter((r) => r.detail).map((r) => r.name)).toEqual([
    "a stranger reaches no model and gets one notice naming their id",
    "approvals are asked in text when limits.buttons is false",
  ]);
  expect(report.passed).toBe(11);
});
