import { spawn } from "node:child_process";

/**
 * sd_notify through the `systemd-notify` binary: Node cannot write to a unix datagram socket.
 * `--pid` attributes the message to the daemon (the unit needs NotifyAccess=all). A no-op outside systemd.
 */
export function createNotifier(env: NodeJS.ProcessEnv = process.env) {
  const socket = env.NOTIFY_SOCKET;
  let queue = Promise.resolve();
  const send = (...assignments: string[]): Promise<void> => {
    if (!socket) return Promise.resolve();
    queue = queue.then(
      () =>
        new Promise<void>((resolve) => {
          // No pipes: nothing is read from it, and without them the spawn blocks the daemon ~1.5 ms less.
          spawn("systemd-notify", [`--pid=${process.pid}`, ...assignments], {
            stdio: "ignore",
            timeout: 3000,
            env: { ...process.env, NOTIFY_SOCKET: socket },
          })
            .once("error", () => resolve())
            .once("exit", () => resolve());
        }),
    );
    return queue;
  };
  return {
    enabled: Boolean(socket),
    ready: (status: string) => send("READY=1", `STATUS=${status}`),
    status: (status: string) => send(`STATUS=${status}`),
    watchdog: () => send("WATCHDOG=1"),
    stopping: () => send("STOPPING=1", "STATUS=stopping"),
    /**
     * MONOTONIC_USEC (CLOCK_MONOTONIC, which Node's hrtime reads) lets systemd tell this reload from an
     * older one; a reload is over only at the next `ready()`, which every reload must send.
     */
    reloading: () => send("RELOADING=1", `MONOTONIC_USEC=${process.hrtime.bigint() / 1000n}`, "STATUS=reloading config"),
    /** Half of WatchdogSec in ms, or undefined when the unit has no watchdog. */
    watchdogIntervalMs: (): number | undefined => {
      const usec = Number(env.WATCHDOG_USEC);
      const pid = env.WATCHDOG_PID ? Number(env.WATCHDOG_PID) : process.pid;
      return usec > 0 && pid === process.pid ? usec / 2000 : undefined;
    },
  };
}

export type Notifier = ReturnType<typeof createNotifier>;
