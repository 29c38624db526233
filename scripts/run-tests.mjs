// Runs vitest and ends with the plain `N passed, N failed` line CI reads; exits non-zero on failure.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "hermes-test-report-"));
const report = join(dir, "report.json");
// The daemons the tests start keep their compile cache here, not in the home directory.
const env = { ...process.env, XDG_CACHE_HOME: join(dir, "cache"), CACHE_DIRECTORY: "" };
const run = spawnSync(
  "npx",
  ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { stdio: "inherit", env },
);
let passed = 0;
let failed = 0;
try {
  const json = JSON.parse(readFileSync(report, "utf8"));
  passed = json.numPassedTests;
  // A file that failed without a failing test (it did not load, a hook threw) counts once; a failing
  // test counts once, not again for its file and its describe blocks.
  const brokenFiles = (json.testResults ?? []).filter(
    (file) => file.status === "failed" && !(file.assertionResults ?? []).some((t) => t.status === "failed"),
  ).length;
  failed = json.numFailedTests + brokenFiles;
} catch {
  failed = Math.max(1, failed);
}
rmSync(dir, { recursive: true, force: true });
if (run.status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && run.status === 0 ? 0 : 1);
