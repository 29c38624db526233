// `hermes ARGS` in a pseudo-terminal (python's pty, through pty-relay.py), as a person at a terminal runs it:
// `expect` waits for output, `type` answers a line, `keys` sends keys as they are (Ctrl-D).
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { CLI } from "./hermes.js";

const RELAY = resolve(import.meta.dirname, "pty-relay.py");
/** ESC [ … letter: readline's cursor moves. */
const ESCAPES = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, "g");

export interface Terminal {
  /** Resolves once `re` matches output not matched before; rejects if the command ends first. */
  expect(re: RegExp): Promise<RegExpMatchArray>;
  /** Types `line` and Enter. */
  type(line: string): void;
  /** Sends keys as they are. */
  keys(keys: string): void;
  /** The command's exit code. */
  exit: Promise<number | null>;
  output(): string;
  kill(): void;
}

export function terminal(args: string[], env: NodeJS.ProcessEnv, cwd?: string): Terminal {
  const child = spawn("python3", [RELAY, process.execPath, CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
    ...(cwd && { cwd }),
  });
  let output = "";
  let seen = 0;
  const waiters: { re: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  const exit = new Promise<number | null>((r) => child.on("close", r));
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    // The terminal's cursor moves (readline redraws its prompt) are not text.
    output += d.replace(ESCAPES, "").replace(/\r/g, "");
    for (const w of [...waiters]) {
      const m = output.slice(seen).match(w.re);
      if (m) {
        seen += (m.index ?? 0) + m[0].length;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  return {
    expect(re: RegExp): Promise<RegExpMatchArray> {
      const m = output.slice(seen).match(re);
      if (m) {
        seen += (m.index ?? 0) + m[0].length;
        return Promise.resolve(m);
      }
      return new Promise((resolveMatch, reject) => {
        waiters.push({ re, resolve: resolveMatch });
        void exit.then(() => reject(new Error(`the command ended before ${re}:\n${output}`)));
      });
    },
    type: (line: string) => child.stdin.write(`${line}\r`),
    keys: (keys: string) => child.stdin.write(keys),
    exit,
    output: () => output,
    kill: () => child.kill("SIGKILL"),
  };
}
