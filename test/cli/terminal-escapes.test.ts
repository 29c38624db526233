/**
 * What the model or a tool wrote, shown on a terminal by `hermes ask`, `hermes audit` and `hermes sessions
 * show`, went there raw: an escape sequence in a call's arguments (a web page can put one there through the
 * model) was run by the owner's terminal. `ESC[8m` hid everything after it, an approval's question included.
 */
import { describe, expect, it } from "vitest";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings } from "../helpers/hermes.js";

/** ESC and CSI (its one-byte C1 form): either starts a sequence the terminal acts on. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const ESCAPES = /[\u001b\u009b]/;

describe("escape sequences from the model and its tools", () => {
  it("are shown as code points, not sent to the terminal, by ask, audit and sessions show", async () => {
    const model = await useModel();
    const hermes = await useHermes(baseSettings(model.url));
    const path = "\u001b[8mhidden\u009b2J.txt";
    model.script(
      {
        toolCalls: [
          { name: "read_file", arguments: { path } },
          { name: "\u001b[2Jtool", arguments: {} },
        ],
      },
      { text: "done" },
    );
    const asked = await hermes.ask("read it");
    expect(asked.code).toBe(0);
    expect(asked.stderr).toContain("read_file path=<U+001B>[8mhidden<U+009B>2J.txt");
    expect(asked.stderr).not.toMatch(ESCAPES);
    const audit = await hermes.cli(["audit"]);
    expect(audit.stdout).toContain("<U+001B>[8mhidden");
    expect(audit.stdout).not.toMatch(ESCAPES);
    const shown = await hermes.cli(["sessions", "show", "cli:default"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toMatch(ESCAPES);
  }, 60_000);
});
