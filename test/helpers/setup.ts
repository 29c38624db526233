// Runs in every test file: the vitest worker may be ended without an "exit" event, so the daemons a
// file left running are killed when the file is done, and the temp dirs its daemons ran in removed. The
// tests never see the owner's own config: XDG_CONFIG_HOME (where hermes looks first for it) points at an
// empty directory of this file's, for this process and every child. HOME stays: child processes such as
// MCP servers need a real one.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { cleanUpTestFile } from "./hermes.js";

const home = mkdtempSync(join(tmpdir(), "hermes-config-"));
process.env.XDG_CONFIG_HOME = home;
for (const name of ["HERMES_CONFIG", "HERMES_SOCKET", "HERMES_INSTALLED"]) delete process.env[name];

afterAll(() => {
  cleanUpTestFile();
  rmSync(home, { recursive: true, force: true });
});
