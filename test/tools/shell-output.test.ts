/**
 * The shell tool's output where the pipe hands it over in pieces: a character of several bytes cut
 * between two pieces is shown whole, not as two U+FFFD.
 */
import { describe, expect, it } from "vitest";
import { runCommand } from "../../tools/shell.js";
import { createTempDir } from "../helpers/hermes.js";

describe("shell output", () => {
  it("keeps a character of several bytes whole when the pipe splits the output inside it", async () => {
    const dir = createTempDir();
    try {
      // 7 bytes a line (two three-byte euro signs and a line feed): the pipe's pieces of 64 KiB end inside characters.
      const result = await runCommand("yes '€€' | head -n 50000", {
        cwd: dir.path,
        timeoutMs: 60_000,
        maxChars: 1_000_000,
      });
      expect(result.code).toBe(0);
      expect(result.output).not.toContain("\uFFFD");
      expect(result.output).toBe("€€\n".repeat(50_000).trimEnd());
    } finally {
      dir.cleanup();
    }
  }, 60_000);

  it("answers at its timeout even when a process that left the process group still holds the output open", async () => {
    const dir = createTempDir();
    try {
      // setsid puts the loop in a session of its own, out of reach of the kill of the command's group; it
      // ends at its first line once nobody reads the output any more.
      const command = "setsid sh -c 'while echo tick; do sleep 0.1; done' & wait";
      const result = await runCommand(command, { cwd: dir.path, timeoutMs: 1000, maxChars: 4000 });
      expect(result.timedOut).toBe(true);
    } finally {
      dir.cleanup();
    }
  }, 30_000);
});
