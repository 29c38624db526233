import { fileURLToPath } from "node:url";
// Through the package export, as a plugin author runs it.
import { runConformance } from "hermes/testing";
import { expect, it } from "vitest";

const NTFY = fileURLToPath(new URL("../../../examples/ntfy-connector/index.js", import.meta.url));

it("the example ntfy plugin, loaded by path, passes the conformance kit", { timeout: 120_000 }, async () => {
  const report = await runConformance(NTFY);
  const failed = report.results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.detail}`);
  expect(failed).toEqual([]);
  expect(report.passed).toBeGreaterThanOrEqual(10);
});
