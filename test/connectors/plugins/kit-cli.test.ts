import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { createTempDir, runCli } from "../../helpers/hermes.js";
import { MEMORY_CHAT } from "../../helpers/plugins.js";

// The example's folder, read as a package (its package.json's exports), as an author runs the kit in it.
const NTFY = fileURLToPath(new URL("../../../examples/ntfy-connector", import.meta.url));

it("hermes connector-test runs the kit against the ntfy example's folder and ends with N passed, N failed", {
  timeout: 120_000,
}, async () => {
  const result = await runCli(["connector-test", NTFY]);
  expect(result.stdout).toMatch(/✓ a long reply is split in order under limits.text/);
  expect(result.stdout.trim().split("\n").at(-1)).toBe("12 passed, 0 failed");
  expect(result.code).toBe(0);
});

it("exits 1 and says why when a check fails", { timeout: 120_000 }, async () => {
  const result = await runCli(["connector-test", MEMORY_CHAT, "--options", '{"truncate_at": 400}']);
  expect(result.stdout).toMatch(/✗ a long reply is split in order under limits.text\n {4}\S/);
  expect(result.stdout.trim().split("\n").at(-1)).toBe("11 passed, 1 failed");
  expect(result.code).toBe(1);
});

it("is a usage error without a module", async () => {
  const result = await runCli(["connector-test"]);
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(/usage: hermes connector-test MODULE/);
});

it("a path that is not there: the hint says it counts from the current folder, from which it was looked up", async () => {
  const dir = createTempDir();
  try {
    const result = await runCli(["connector-test", "./plugins/missing.mjs"], { cwd: dir.path });
    expect(result.stdout).toContain(
      `no file ${join(dir.path, "plugins/missing.mjs")}; correct the path; a relative one counts from the current folder`,
    );
    expect(result.code).toBe(1);
  } finally {
    dir.cleanup();
  }
});
