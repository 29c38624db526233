import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { dirname } from "node:path";

/** What a running daemon holds; `release` gives up the database's claim (on stop, or a failed start). */
export interface InstanceClaim {
  release(): void;
}

/**
 * Refuses a second daemon on the same socket or database before it touches either: it would take over the
 * socket of the running one and recover (interrupt) its runs. The socket is asked who answers; the database
 * is claimed by `<db>.pid`, a file that holds the owner's pid and counts only while that process is a hermes.
 */
export async function claimInstance(dbPath: string, socketPath: string | undefined): Promise<InstanceClaim> {
  if (socketPath) {
    const answer = await askSocket(socketPath);
    if (answer) throw refusal(answer.pid, `is serving ${socketPath}`);
  }
  if (dbPath === ":memory:") return { release() {} };
  const pidFile = `${dbPath}.pid`;
  const holder = livingHolder(pidFile);
  if (holder !== undefined && holder !== process.pid) throw refusal(holder, `uses the database ${dbPath}`);
  mkdirSync(dirname(pidFile), { recursive: true, mode: 0o700 });
  writeFileSync(pidFile, `${process.pid}\n`, { mode: 0o600 });
  return {
    release: () => {
      if (livingHolder(pidFile) === process.pid) rmSync(pidFile, { force: true });
    },
  };
}

/** Another daemon holds the socket or the database this one was configured with. */
export class InstanceError extends Error {
  override name = "InstanceError";
}

function refusal(pid: number | undefined, what: string): InstanceError {
  const who = pid ? `another hermes (pid ${pid})` : "another hermes";
  return new InstanceError(`${who} ${what}; stop it first (systemctl stop hermes), or give this one its own socket and storage.path`);
}

/** The pid in the file when that process runs and is a hermes (a pid reused by another program does not count). */
function livingHolder(pidFile: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, "utf8").trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  if (pid === process.pid) return pid;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return undefined; // ESRCH: gone
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("hermes") ? pid : undefined;
  } catch {
    return pid; // no /proc to tell: a living pid is taken for the holder
  }
}

/** Connects to the socket and asks `hello`; undefined when nothing listens (a stale file, or none). */
function askSocket(path: string): Promise<{ pid?: number } | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    const done = (answer: { pid?: number } | undefined) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(2000, () => done({}));
    socket.once("error", () => done(undefined));
    socket.once("connect", () => socket.write(`${JSON.stringify({ v: 1, id: "instance", op: "hello" })}\n`));
    let buffer = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk;
      if (!buffer.includes("\n")) return;
      try {
        const pid = (JSON.parse(buffer.slice(0, buffer.indexOf("\n"))) as { pid?: unknown }).pid;
        done(typeof pid === "number" ? { pid } : {});
      } catch {
        done({});
      }
    });
  });
}
