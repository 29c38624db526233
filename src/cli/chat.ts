import { createInterface } from "node:readline";
import { type Client, MessageTooLong } from "./client.js";
import { confirmFor } from "./confirm.js";
import { createStyle } from "./render.js";
import { runMessage } from "./run-view.js";

const COMMANDS = ["/new", "/compact", "/stop", "/exit"] as const;
/** A line that looks like a command (`/word`, `/word args`); `/etc/hosts?` is a message. */
const COMMAND_LIKE = /^\/[A-Za-z_]+(\s|$)/;

/**
 * `hermes chat`: a REPL over the socket. /new, /compact, /stop, /exit; Ctrl-C and /stop stop the run that is
 * answering, at once: input stays live while it streams (paused, readline would not see either).
 */
export async function chat(client: Client, session: string): Promise<number> {
  const style = createStyle(process.stdout.isTTY === true);
  const rl = createInterface({ input: process.stdin, output: process.stdout, historySize: 500, terminal: process.stdin.isTTY });
  const lines = lineQueue(rl);
  const prompt = () => {
    if (lines.closed()) return;
    rl.setPrompt(style.bold("you › "));
    rl.prompt();
  };
  let busy = false;
  const stopRun = () => void client.call({ op: "stop", session }).then(() => process.stderr.write(style.dim("\n(stopped)\n")));
  const interrupt = () => (busy ? stopRun() : rl.close());
  rl.on("SIGINT", interrupt);
  // Without a terminal, Ctrl-C arrives as the signal itself.
  if (!process.stdin.isTTY) process.on("SIGINT", interrupt);
  lines.onWhileBusy((text) => {
    if (!busy || text !== "/stop") return false;
    stopRun();
    return true;
  });
  process.stdout.write(
    style.dim(`hermes chat — session ${session}. /new starts over, /compact summarises, /stop aborts, /exit or Ctrl-D leaves.\n`),
  );
  prompt();
  for (let line = await lines.next(); line !== undefined; line = await lines.next()) {
    const text = line.trim();
    if (text === "/exit" || text === "/quit") break;
    if (text === "/new" || text === "/stop" || text === "/compact") {
      if (text === "/compact") process.stdout.write(style.dim("(summarising…)\n"));
      const op = text === "/new" ? "new" : text === "/stop" ? "stop" : "compact";
      const reply = await client.call({ op, session });
      process.stdout.write(style.dim(`${reply.type === "result" ? reply.message : "failed"}\n`));
    } else if (COMMAND_LIKE.test(text)) {
      process.stdout.write(style.dim(`unknown command ${text.split(/\s/)[0]}; commands: ${COMMANDS.join(", ")}\n`));
    } else if (text) {
      busy = true;
      try {
        await runMessage(client, session, text, {
          json: false,
          stream: true,
          confirm: process.stdin.isTTY ? (p) => askInline(rl, p) : confirmFor({}),
          out: process.stdout,
          err: process.stderr,
        });
      } catch (err) {
        // A message the daemon cannot take (over the socket's line limit) is said so, and the chat goes on.
        if (!(err instanceof MessageTooLong)) throw err;
        process.stderr.write(`${style.red(err.message)}\n`);
      } finally {
        busy = false;
      }
    }
    prompt();
  }
  process.off("SIGINT", interrupt);
  rl.close();
  return 0;
}

/**
 * The lines typed, in order, taken one at a time; a line that `whileBusy` takes (a /stop during a run) is
 * acted on when typed, not queued behind the run.
 */
function lineQueue(rl: ReturnType<typeof createInterface>) {
  const pending: string[] = [];
  let closed = false;
  let wake: (() => void) | undefined;
  let whileBusy: (text: string) => boolean = () => false;
  rl.on("line", (line) => {
    if (whileBusy(line.trim())) return;
    pending.push(line);
    wake?.();
  });
  // Piped input can end while a run is still answering; Node 24 throws on prompting a closed interface.
  rl.once("close", () => {
    closed = true;
    wake?.();
  });
  return {
    closed: () => closed,
    onWhileBusy: (take: (text: string) => boolean) => {
      whileBusy = take;
    },
    next: async (): Promise<string | undefined> => {
      while (pending.length === 0 && !closed) await new Promise<void>((r) => (wake = r));
      return pending.shift();
    },
  };
}

function askInline(rl: ReturnType<typeof createInterface>, prompt: string): Promise<boolean> {
  return new Promise((resolve) => {
    rl.question(`${prompt}\nRun it? [y/N] `, (answer) => resolve(/^y(es)?$/i.test(answer.trim())));
  });
}
