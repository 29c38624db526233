// What the command line takes: a word too many, a bad --limit or an unknown setup section is a usage error (exit 2).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTempDir, runCli } from "../helpers/hermes.js";

describe("the command line's words", () => {
  let dir: ReturnType<typeof createTempDir>;
  let config: string;
  /** A config that does not exist and a socket nobody answers on: a command that gets past its arguments exits 1 or 3. */
  const run = (args: string[]) => runCli([...args, "--config", config], { env: { HERMES_SOCKET: join(dir.path, "none.sock") } });

  beforeAll(() => {
    dir = createTempDir();
    config = join(dir.path, "hermes.yaml");
  });
  afterAll(() => dir.cleanup());

  it.each([
    [["backup", "a", "b"], "'b' after `hermes backup a`"],
    [["status", "extra"], "'extra' after `hermes status`"],
    [["restore", "a", "b"], "'b' after `hermes restore a`"],
    [["export", "x"], "'x' after `hermes export`"],
    [["sessions", "show", "KEY", "more"], "'more' after `hermes sessions show KEY`"],
    [["sessions", "list", "x"], "'x' after `hermes sessions list`"],
    [["approvals", "deny", "1", "2"], "'2' after `hermes approvals deny 1`"],
    [["memory", "forget", "3", "4"], "'4' after `hermes memory forget 3`"],
    [["config", "check", "now"], "'now' after `hermes config check`"],
    [["pair", "telegram", "discord"], "'discord' after `hermes pair telegram`"],
  ])("hermes %j is a usage error naming the word not expected", async (args, named) => {
    const result = await run(args);
    expect(result.stderr.trim()).toBe(`hermes: unexpected argument ${named}; see \`hermes --help\``);
    expect(result.code).toBe(2);
  });

  it.each([
    [["status"], 3],
    [["sessions"], 3],
    [["sessions", "show", "cli:default"], 3],
    [["approvals", "approve", "7"], 3],
    [["schedules", "run", "morning-briefing"], 3],
    [["memory", "forget", "3"], 3],
    [["ask", "what", "is", "the", "time"], 3],
    [["backup", "copy.db"], 1],
    [["search", "two", "words"], 1],
    [["skills", "check", "some/dir"], 1],
  ])("hermes %j, as documented, gets past its arguments (exit %i)", async (args, code) => {
    const result = await run(args);
    expect(result.stderr).not.toMatch(/unexpected argument|usage/);
    expect(result.code).toBe(code);
  });

  it.each([["ask", "hi"], ["chat"]])(
    "hermes %s --session with a name the daemon does not take is a usage error, before any daemon is asked",
    async (...args) => {
      for (const name of ["a b", "", "café", "x".repeat(65)]) {
        const result = await run([...args, "--session", name]);
        expect(result.stderr).toContain("hermes: --session takes a name of 1 to 64 letters");
        expect(result.stdout).toBe("");
        expect(result.code).toBe(2);
      }
    },
  );

  it("hermes audit --limit x is a usage error, before any daemon is asked", async () => {
    const result = await run(["audit", "--limit", "x"]);
    expect(result.stderr).toBe("hermes: --limit must be a positive integer\n");
    expect(result.code).toBe(2);
  });

  it("hermes setup with an unknown section is a usage error and writes nothing", async () => {
    const result = await run(["setup", "frob", "--non-interactive"]);
    expect(result.stderr).toMatch(/^hermes: unknown section frob; sections: model, telegram/);
    expect(result.code).toBe(2);
    expect(existsSync(config)).toBe(false);
  });
});
