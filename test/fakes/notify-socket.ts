/** Runs the python3 NOTIFY_SOCKET listener and collects what the daemon tells "systemd". */
import { spawn } from "node:child_process";
import { join, sep } from "node:path";

export interface NotifySocket {
  path: string;
  messages: string[];
  /** Resolves with the first message (from index `from` on) that matches. */
  waitFor(predicate: (message: string) => boolean, from?: number): Promise<string>;
  close(): void;
}

export async function startNotifySocket(dir: string): Promise<NotifySocket> {
  const path = join(dir, "notify.sock");
  const script = join(import.meta.dirname.replace(`${sep}dist${sep}test${sep}`, `${sep}test${sep}`), "notify-listener.py");
  const child = spawn("python3", [script, path], { stdio: ["ignore", "pipe", "inherit"] });
  const messages: string[] = [];
  const waiters: { predicate: (m: string) => boolean; from: number; resolve: (m: string) => void }[] = [];
  let buffer = "";
  let listening: () => void = () => {};
  const ready = new Promise<void>((r) => {
    listening = r;
  });
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const message = JSON.parse(buffer.slice(0, nl)) as string;
      buffer = buffer.slice(nl + 1);
      if (message === "LISTENING") {
        listening();
        continue;
      }
      messages.push(message);
      for (const w of waiters.filter((w) => messages.length - 1 >= w.from && w.predicate(message))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(message);
      }
    }
  });
  await ready;
  return {
    path,
    messages,
    waitFor: (predicate, from = 0) => {
      const found = messages.slice(from).find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ predicate, from, resolve }));
    },
    close: () => child.kill(),
  };
}
