import { createInterface } from "node:readline";
import type { Client } from "./client.js";
import { confirmFor } from "./confirm.js";
import { createStyle } from "./render.js";
import { runMessage } from "./run-view.js";

/** `hermes chat`: a REPL over the socket. /new, /compact, /stop, /exit; Ctrl-C aborts the run, not the daemon. */
export async function chat(client: Client, session: string): Promise<number> {
  const style = createStyle(process.stdout.isTTY === true);
  const rl = createInterface({ input: process.stdin, output: process.stdout, historySize: 500, terminal: process.stdin.isTTY });
  // Piped input can end while a run is still answering; Node 24 throws on prompting a closed interface.
  let closed = false;
  rl.once("close", () => {
    closed = true;
  });
  const prompt = () => {
    if (closed) return;
    rl.setPrompt(style.bold("you › "));
    rl.prompt();
  };
  let busy = false;
  rl.on("SIGINT", () => {
    if (busy) void client.call({ op: "stop", session }).then(() => process.stderr.write(style.dim("\n(stopped)\n")));
    else rl.close();
  });
  process.stdout.write(
    style.dim(`hermes chat — session ${session}. /new starts over, /compact summarises, /stop aborts, /exit or Ctrl-D leaves.\n`),
  );
  prompt();
  for await (const line of rl) {
    const text = line.trim();
    if (text === "/exit" || text === "/quit") break;
    if (text === "/new" || text === "/stop" || text === "/compact") {
      if (text === "/compact") process.stdout.write(style.dim("(summarising…)\n"));
      const op = text === "/new" ? "new" : text === "/stop" ? "stop" : "compact";
      const reply = await client.call({ op, session });
      process.stdout.write(style.dim(`${reply.type === "result" ? reply.message : "failed"}\n`));
    } else if (text) {
      busy = true;
      rl.pause();
      await runMessage(client, session, text, {
        json: false,
        stream: true,
        confirm: process.stdin.isTTY ? (p) => askInline(rl, p) : confirmFor({}),
        out: process.stdout,
        err: process.stderr,
      });
      busy = false;
      rl.resume();
    }
    prompt();
  }
  rl.close();
  return 0;
}

function askInline(rl: ReturnType<typeof createInterface>, prompt: string): Promise<boolean> {
  return new Promise((resolve) => {
    rl.resume();
    rl.question(`${prompt}\nRun it? [y/N] `, (answer) => {
      rl.pause();
      resolve(/^y(es)?$/i.test(answer.trim()));
    });
  });
}
