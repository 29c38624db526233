/**
 * A request line over the socket's 1 MiB limit: the daemon answers `too_long` before it has read an id, and
 * `hermes ask` waited for an answer to its own id for ever.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, runCli } from "../helpers/hermes.js";

describe("hermes ask with a message over the socket's 1 MiB line limit", () => {
  let model: FakeModel;
  beforeEach(async () => {
    model = await useModel();
  });

  it("fails at once, saying how long it was and what fits, and the daemon goes on", async () => {
    const hermes = await useHermes(baseSettings(model.url));
    // 11 words of 100 KiB (each under the kernel's 128 KiB limit for one argument): 1.1 MiB of text.
    const words = Array.from({ length: 11 }, () => "a".repeat(100 * 1024));
    const result = await Promise.race([
      runCli(["ask", ...words], { cwd: hermes.dir, env: { HERMES_CONFIG: hermes.configPath } }),
      new Promise<"hung">((r) => setTimeout(() => r("hung"), 8000)),
    ]);
    expect(result).not.toBe("hung");
    if (result === "hung") return;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/the message is too long: \d+ bytes as sent, at most 1048576/);
    expect(model.requests).toHaveLength(0);
    expect((await hermes.ask("hello")).code).toBe(0);
  }, 25_000);
});

describe("hermes chat with a line over the socket's limit", () => {
  it("says the message is too long and goes on with the next line", async () => {
    const model = await useModel();
    model.respond(() => ({ text: "hi there" }));
    const hermes = await useHermes(baseSettings(model.url));
    const result = await runCli(["chat"], {
      cwd: hermes.dir,
      env: { HERMES_CONFIG: hermes.configPath },
      input: `${"a".repeat(1_100_000)}\nhello\n`,
    });
    expect(result.stderr).toMatch(/the message is too long: \d+ bytes as sent, at most 1048576/);
    expect(result.stdout).toContain("hi there");
    expect(result.code).toBe(0);
    expect(model.requests).toHaveLength(1);
  }, 25_000);
});
