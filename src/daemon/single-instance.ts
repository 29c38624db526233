import { constants, copyFileSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
  mkdirSync(dirname(pidFile), { recursive: true, mode: 0o700 });
  claimFile(pidFile, dbPath);
  return {
    release: () => {
      if (livingHolder(pidFile) === process.pid) rmSync(pidFile, { force: true });
    },
  };
}

/**
 * Makes the pid file this process's, or throws when a living hermes holds it. The file appears whole and
 * only if there is none (a hard link of a written one): two starts at once both found no file and both
 * wrote theirs, and two daemons ran on one database. A stale file is removed and the claim made again.
 */
function claimFile(pidFile: string, dbPath: string): void {
  // The pid, then this boot's id and the process's start time: after a power cut or a crash the pid may be
  // any other process's by now, and a living pid alone would keep every later start out.
  const mine = `${pidFile}.${process.pid}`;
  writeFileSync(mine, `${process.pid}\n${bootId() ?? ""}\n${startTimeOf(process.pid) ?? ""}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (linked(mine, pidFile)) return;
      const holder = livingHolder(pidFile);
      if (holder !== undefined && holder !== process.pid) throw refusal(holder, `uses the database ${dbPath}`);
      rmSync(pidFile, { force: true });
    }
    throw refusal(undefined, `uses the database ${dbPath}`);
  } finally {
    rmSync(mine, { force: true });
  }
}

/** True once `path` is a link to `from`; false when `path` exists. A file system without hard links gets a copy. */
function linked(from: string, path: string): boolean {
  try {
    linkSync(from, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw err;
  }
  try {
    copyFileSync(from, path, constants.COPYFILE_EXCL);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
}

/** The pid of the hermes that holds the database `dbPath` (its claim, `<db>.pid`), if one runs. */
export function databaseHolder(dbPath: string): number | undefined {
  const holder = livingHolder(`${dbPath}.pid`);
  return holder === process.pid ? undefined : holder;
}

/** Another daemon holds the socket or the database this one was configured with. */
export class InstanceError extends Error {
  override name = "InstanceError";
}

function refusal(pid: number | undefined, what: string): InstanceError {
  const who = pid ? `another hermes (pid ${pid})` : "another hermes";
  return new InstanceError(`${who} ${what}; stop it first (systemctl stop hermes), or give this one its own socket and storage.path`);
}

/**
 * The pid in the file when that process runs and is the hermes that wrote it: written in this boot, started
 * when it was, and a hermes (a pid reused by another program does not count). A process of another user is
 * not one either: the database's folder is this user's, and under systemd's `ProtectProc=invisible` such a
 * process cannot even be looked at (a pid taken by one after a reboot kept the service from starting).
 */
function livingHolder(pidFile: string): number | undefined {
  let lines: string[];
  try {
    lines = readFileSync(pidFile, "utf8").split("\n");
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]?.trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  if (pid === process.pid) return pid;
  const [boot, started] = [lines[1]?.trim(), lines[2]?.trim()];
  if (differs(boot, bootId())) return undefined; // written before a reboot
  try {
    process.kill(pid, 0);
  } catch {
    return undefined; // ESRCH: gone; EPERM: another user's process
  }
  if (differs(started, startTimeOf(pid))) return undefined;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("hermes") ? pid : undefined;
  } catch {
    return pid; // no /proc to tell: a living pid of this user is taken for the holder
  }
}

/** A value the pid file recorded that is known now and is not what it was (a file before these lines says nothing). */
function differs(recorded: string | undefined, now: string | undefined): boolean {
  return !!recorded && now !== undefined && recorded !== now;
}

/** This boot's id (Linux), which changes at every boot. */
function bootId(): string | undefined {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return undefined;
  }
}

/** When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat`'s 22nd field), where /proc tells. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces: the fields after it are counted from there.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
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
