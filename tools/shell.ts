import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import type { ToolName } from "../src/config/schema.js";
import { z } from "../src/config/zod.js";
import { defineTool } from "../src/tools/define.js";
import type { ToolDeps } from "../src/tools/types.js";

/** Runs one shell command. Off unless enabled; every call needs the owner's yes. */
export function createTool(_name: ToolName, deps: ToolDeps) {
  const settings = deps.config.tools.shell;
  const cwd = settings.cwd ?? deps.config.tools.files.root;
  const timeoutMs = (settings.timeout_s ?? 30) * 1000;
  return defineTool({
    name: "shell",
    description:
      'Run one shell command on the home server and get its exit code and output. The owner must approve every command. Example: {"command": "df -h /"}.',
    input: z.strictObject({ command: z.string().min(1).max(4000) }),
    readOnly: false,
    needsConfirmation: true,
    // The tool enforces its own timeout (killing the process group); the gate's is a backstop.
    timeoutMs: timeoutMs + 5000,
    run: async ({ command }, ctx) => {
      await mkdir(cwd, { recursive: true });
      const result = await runCommand(command, { cwd, timeoutMs, maxChars: settings.max_output_chars, signal: ctx.signal });
      const status = result.timedOut ? `timed out after ${timeoutMs / 1000} s (killed)` : `exit code ${result.code ?? result.signal}`;
      return `${status}\n${result.output || "(no output)"}`;
    },
  });
}

export interface CommandResult {
  code: number | null;
  signal: string | null;
  timedOut: boolean;
  /** The tail of stdout and stderr together, cut to the limit with a marker. */
  output: string;
}

export function runCommand(
  command: string,
  o: { cwd: string; timeoutMs: number; maxChars: number; signal?: AbortSignal },
): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = spawn("/bin/sh", ["-c", command], { cwd: o.cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let dropped = 0;
    let timedOut = false;
    const collect = (chunk: string) => {
      output += chunk;
      if (output.length > o.maxChars * 2) {
        dropped += output.length - o.maxChars;
        output = output.slice(-o.maxChars);
      }
    };
    // Decoded per stream, so a character whose bytes arrive in two pieces is not shown as two U+FFFD.
    child.stdout.setEncoding("utf8").on("data", collect);
    child.stderr.setEncoding("utf8").on("data", collect);
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
      // A process that left the group (setsid) may hold the output open: "close" must not wait for it.
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, o.timeoutMs);
    o.signal?.addEventListener("abort", kill, { once: true });
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, timedOut: false, output: `cannot run the command: ${err.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", kill);
      if (output.length > o.maxChars) {
        dropped += output.length - o.maxChars;
        output = output.slice(-o.maxChars);
      }
      const marker = dropped > 0 ? `[… ${dropped} earlier characters cut …]\n` : "";
      resolve({ code, signal, timedOut, output: marker + output.trimEnd() });
    });
  });
}
