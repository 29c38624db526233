import { createWriteStream } from "node:fs";
import type { Confirm } from "./run-view.js";

/**
 * --yes approves, --no denies; otherwise ask [y/N] on the terminal, and without one the answer is no.
 * Whether there is a terminal is looked at when there is a question: process.stdin is built on first use.
 */
export function confirmFor(values: { yes?: boolean; no?: boolean }): Confirm {
  if (values.yes) return announce(true);
  if (values.no) return announce(false);
  const noTerminal = announce(false, " (no terminal to ask; use --yes to approve)");
  return (prompt) => (process.stdin.isTTY ? askOnTerminal(prompt) : noTerminal(prompt));
}

function announce(answer: boolean, note = ""): Confirm {
  return async (prompt) => {
    process.stderr.write(`${prompt}\n→ ${answer ? "approved" : "denied"}${note}\n`);
    return answer;
  };
}

/**
 * readline is imported here, when there is a question to ask: `hermes ask` starts ~1 ms sooner without it.
 * The answer is read from stdin, the terminal (confirmFor asks only when it is one): a stream read from
 * /dev/tty left a read pending after the answer, which took the next line typed (a second confirmation's
 * answer) and kept the command from exiting until Enter was pressed again. The question goes to the
 * terminal itself, whatever stdout and stderr were sent to.
 */
async function askOnTerminal(prompt: string): Promise<boolean> {
  const { createInterface } = await import("node:readline/promises");
  const output = createWriteStream("/dev/tty");
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  // In raw mode Ctrl-C is a key, not the signal: it ends the command as at any other moment of `hermes ask`.
  rl.on("SIGINT", () => {
    rl.close();
    process.kill(process.pid, "SIGINT");
  });
  try {
    const answer = await rl.question(`${prompt}\nRun it? [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
    process.stdin.pause();
    output.end();
  }
}
