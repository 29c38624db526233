import { expect, it } from "vitest";
import { runConformance } from "../../../connectors/kit/run.js";
import { MEMORY_CHAT } from "../../helpers/plugins.js";

it("a plugin with buttons and edits passes every check of the kit", { timeout: 120_000 }, async () => {
  const report = await runConformance(MEMORY_CHAT);
  expect(report.results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
});

it("the kit passes a plugin that hands over no message ids (they are optional), saying the check does not apply", {
  timeout: 60_000,
}, async () => {
  const report = await runConformance(MEMORY_CHAT, { options: { drop_ids: true }, only: ["inbound id"] });
  expect(report.failed).toBe(0);
  expect(report.results.find((r) => r.name.includes("inbound id"))?.detail).toMatch(
    /^not applicable: the plugin gives host.receive no message ids/,
  );
});

it("the kit fails a plugin whose network keeps less of a message than its limits.text says, and says why", {
  timeout: 60_000,
}, async () => {
  const report = await runConformance(MEMORY_CHAT, { options: { truncate_at: 400 }, only: ["long reply"] });
  expect(report.failed).toBe(1);
  expect(report.results.find((r) => !r.ok)?.detail).toBeTruthy();
});

it("the kit fails a plugin whose health() throws (hermes status would show it red), and says why", { timeout: 60_000 }, async () => {
  const report = await runConformance(MEMORY_CHAT, { options: { sick: true }, only: ["health is green"], timeoutMs: 3000 });
  expect(report.results.filter((r) => !r.ok).map((r) => r.detail)).toEqual([
    expect.stringMatching(/health\(\) failed: the room has no health \(sick: true\)/),
  ]);
});
