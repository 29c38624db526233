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

  /** Runs `task` in a slot; the slot is freed when the task ends, or earlier when it calls `release`. */
  run<T>(task: (release: () => void) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        let held = true;
        const release = () => {
          if (!held) return;
          held = false;
          this.active--;
          this.drain();
        };
        const ended = (settle: () => void) => {
          release();
          // Let the next waiter's request go out before this task's caller does its bookkeeping: with one
          // model slot, every millisecond between two model calls is time the model sits idle.
          if (this.waiting.length > 0 || this.active > 0) setImmediate(settle);
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
      } else this.waiting.push(start);
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
