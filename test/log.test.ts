import { stripVTControlCharacters } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { addLogSecrets, createLogger } from "../src/log.js";

describe("the log on a terminal", () => {
  const write = process.stdout.write;
  afterEach(() => {
    process.stdout.write = write;
  });

  it("is pretty, written at once by the daemon's own thread, and still scrubbed of secrets", () => {
    const lines: string[] = [];
    process.stdout.write = ((chunk: string) => lines.push(String(chunk)) > 0) as typeof process.stdout.write;
    const log = createLogger("info", ["tg-secret-token"], "pretty");
    log.info({ token: "abc", chat: 7 }, "polling with tg-secret-token");
    log.debug("below the level");
    process.stdout.write = write;
    // One line, there before the call returned: nothing is lost when the process exits right after.
    expect(lines).toHaveLength(1);
    const text = stripVTControlCharacters(lines[0] ?? "");
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\] INFO \(\d+\): polling with \[redacted\]\n/);
    expect(text).toContain('token: "[redacted]"');
    expect(text).toContain("chat: 7");
    expect(text).not.toContain("tg-secret-token");
  });

  it("scrubs a secret added later (a reload's new token), and one nested deeper than it walks", () => {
    const lines: string[] = [];
    process.stdout.write = ((chunk: string) => lines.push(String(chunk)) > 0) as typeof process.stdout.write;
    const log = createLogger("info", ["first-secret"], "json");
    addLogSecrets(log, ["second-secret", "ab"]);
    log.info({ deep: { a: { b: { c: { d: { e: "x second-secret y" } } } } } }, "with first-secret and second-secret and ab");
    process.stdout.write = write;
    const line = JSON.parse(lines[0] ?? "{}");
    expect(line.msg).toBe("with [redacted] and [redacted] and ab");
    expect(JSON.stringify(line)).not.toMatch(/first-secret|second-secret/);
  });
});
