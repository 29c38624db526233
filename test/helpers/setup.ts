// Runs in every test file: the vitest worker may be ended without an "exit" event, so the daemons a
// file left running are killed when the file is done. The tests never see the owner's own config: HOME
// and XDG_CONFIG_HOME point at an empty directory of this file's, for this process and every child.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { killLeftoverDaemons } from "./hermes.js";

const home = mkdtempSync(join(tmpdir(), "hermes-home-"));
process.env.HOME = home;
process.env.XDG_CONFIG_HOME = join(home, ".config");
for (const name of ["HERMES_CONFIG", "HERMES_SOCKET", "HERMES_INSTALLED"]) delete process.env[name];

afterAll(() => {
  killLeftoverDaemons();
  rmSync(home, { recursive: true, force: true });
});
