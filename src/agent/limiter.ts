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
  async run<T>(task: (release: () => void) => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      this.active--;
      this.drain();
    };
    let result: T;
    try {
      result = await task(release);
    } finally {
      release();
    }
    // Let the next waiter's request go out before this task's caller does its bookkeeping: with one
    // model slot, every millisecond between two model calls is time the model sits idle.
    if (this.waiting.length > 0 || this.active > 0) await new Promise((r) => setImmediate(r));
    return result;
  }

  private drain(): void {
    while (this.active < this.limit && this.waiting.length > 0) {
      this.active++;
      this.waiting.shift()?.();
    }
  }
}
