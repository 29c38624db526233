/**
 * How long a finished task's caller waits, when others are in line, before it goes on (its bookkeeping:
 * the reply, its SQLite transactions, the next run's start, ~3.5 ms of CPU a Telegram message). The next
 * waiter's request has gone out by then, and the process that reads it, the model server on the same
 * machine, is woken on the core of the process that wrote it; were the daemon to keep that core busy,
 * the model server would wait behind it or for another core to wake. Sleeping instead lets it read the
 * request at once: over 100 chats × 5 messages with a 20 ms model the run took 1.7–2.7 % over a bare
 * client instead of 5.1–6.0 % (interleaved runs), and the bookkeeping of a reply is 1 ms later.
 */
const HAND_OFF_MS = 1;

/** Bounds how many tasks run at once (a home GPU serves one model request at a time). FIFO. */
export class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private limit: number) {}

  setLimit(limit: number): void {
    this.limit = limit;
    this.drain();
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Runs `task` in a slot; the slot is freed when the task ends, or earlier when it calls `release`. A task
   * whose `signal` aborts while it waits for a slot leaves the line and starts at once without one: its
   * run was stopped, and its task (a model call with that signal) ends straight away.
   */
  run<T>(task: (release: () => void) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = (counted = true) => {
        let held = counted;
        const release = () => {
          if (!held) return;
          held = false;
          this.active--;
          this.drain();
        };
        const ended = (settle: () => void) => {
          release();
          // With others in line, this task's caller does its bookkeeping a moment later (see HAND_OFF_MS).
          if (this.waiting.length > 0 || this.active > 0) setTimeout(settle, HAND_OFF_MS);
          else settle();
        };
        let running: Promise<T>;
        try {
          running = task(release);
        } catch (err) {
          return ended(() => reject(err));
        }
        running.then(
          (result) => ended(() => resolve(result)),
          (err: unknown) => ended(() => reject(err)),
        );
      };
      if (this.active < this.limit) {
        this.active++;
        start();
        return;
      }
      if (signal?.aborted) return start(false); // stopped already: no need to wait for a slot
      const queued = () => {
        signal?.removeEventListener("abort", stopped);
        start();
      };
      const stopped = () => {
        const at = this.waiting.indexOf(queued);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        start(false);
      };
      this.waiting.push(queued);
      signal?.addEventListener("abort", stopped, { once: true });
    });
  }

  /**
   * Hands free slots to the waiters, starting each at once, inside the release: a slot is mostly released
   * from the model's response as it ends, and the next request then goes out before anything else the
   * releasing task or the event loop has queued (~0.15 ms sooner per call than resuming an awaiting waiter,
   * measured between two calls of a queue of chats). Its keep-alive socket is not free yet at that moment:
   * the agent keeps a second one, and the two take turns.
   */
  private drain(): void {
    while (this.active < this.limit && this.waiting.length > 0) {
      this.active++;
      (this.waiting.shift() as () => void)();
    }
  }
}
