import { expect } from "vitest";
import { runSubject } from "../../../connectors/kit/run.js";
import type { KitSubject } from "../../../connectors/kit/subject.js";

/**
 * A built-in chat connector passes every check of the kit; the two it answers "not applicable" (text approvals,
 * failed-send health) say why, in its profile.
 */
export async function expectChatConnectorPasses(subject: KitSubject): Promise<void> {
  const report = await runSubject(subject);
  expect(report.results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
  expect(report.results.filter((r) => r.detail).map((r) => r.name)).toEqual([
    "approvals are asked in text when limits.buttons is false",
    "a throwing send turns the plugin's health red and leaves the daemon up",
  ]);
  expect(report.passed).toBe(11);
}
