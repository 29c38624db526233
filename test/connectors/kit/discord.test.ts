import { expect, it } from "vitest";
import { runSubject } from "../../../connectors/kit/run.js";
import { discordSubject } from "./discord-subject.js";

it("the Discord connector passes the conformance kit through the fake REST API and gateway", { timeout: 120_000 }, async () => {
  const report = await runSubject(discordSubject());
  expect(report.results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
  expect(report.results.filter((r) => r.detail).map((r) => r.name)).toEqual([
    "approvals are asked in text when limits.buttons is false",
    "a throwing send turns the plugin's health red and leaves the daemon up",
  ]);
  expect(report.passed).toBe(10);
});
