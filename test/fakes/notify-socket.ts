/** Runs the python3 NOTIFY_SOCKET listener and collects what the daemon tells "systemd". */
import { spawn } from "node:child_process";
import { join, sep } from "node:path";
import { createChanges, waitForEntry } from "../helpers/wait.js";

export interface NotifySocket {
  path: string;
  messages: string[];
  /** Resolves with the first message (from index `from` on) that matches. */
  waitFor(predicate: (message: string) => boolean, from?: number, timeoutMs?: number): Promise<string>;
  close(): void;
}

export async function startNotifySocket(dir: string): Promise<NotifySocket> {
  const path = join(dir, "notify.sock");
  const script = join(import.meta.dirname.replace(`${sep}dist${sep}test${sep}`, `${sep}test${sep}`), "notify-listener.py");
  const child = spawn("python3", [script, path], { stdio: ["ignore", "pipe", "inherit"] });
  const messages: string[] = [];
  const changes = createChanges();
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
      changes.notify();
    }
  });
  await ready;
  return {
    path,
    messages,
    waitFor: (predicate, from = 0, timeoutMs) => waitForEntry(messages, predicate, from, "notify message", changes, timeoutMs),
    close: () => child.kill(),
  };
}
