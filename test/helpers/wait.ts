/**
 * The one way a test waits for something: a deadline and a message, so a wait that never ends fails
 * with what it waited for instead of hanging until vitest's timeout. Free of vitest, because the fakes
 * and the benchmark use it too.
 */

/** Long enough for a daemon on a loaded machine, short enough to fail inside vitest's 30 s test timeout. */
export const WAIT_MS = 20_000;

export interface WaitOptions {
  /** How long to wait before failing (default WAIT_MS). */
  timeoutMs?: number;
  /** What was awaited, said in the error when the deadline passes; a function is asked only then. */
  message: string | (() => string);
  /** Looks again when this fires (a fake's new call, a new log line) instead of every `everyMs`. */
  changes?: Changes;
  /** How often to look when nothing signals a change (default 10 ms). */
  everyMs?: number;
}

/** Something that tells its listeners "look again": a fake's list of calls, the daemon's log. */
export interface Changes {
  listen(wake: () => void): () => void;
}

/** A `Changes` whose owner calls `notify()` after each change. */
export function createChanges(): Changes & { notify(): void } {
  const listeners = new Set<() => void>();
  return {
    listen(wake) {
      listeners.add(wake);
      return () => listeners.delete(wake);
    },
    notify() {
      for (const wake of [...listeners]) wake();
    },
  };
}

/**
 * Resolves the first truthy value `look` returns; rejects with `message` once `timeoutMs` has passed
 * without one. With `changes` it looks again on each change (and not on a timer); without, every `everyMs`.
 */
export function waitFor<T>(
  look: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: WaitOptions,
): Promise<T> {
  const { timeoutMs = WAIT_MS, everyMs = 10 } = options;
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let looking = false;
    let again = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(timer);
      stopListening?.();
      outcome();
    };
    const deadline = setTimeout(() => {
      const text = typeof options.message === "function" ? options.message() : options.message;
      finish(() => reject(new Error(`waited ${timeoutMs} ms in vain: ${text}`)));
    }, timeoutMs);
    const check = async () => {
      if (settled) return;
      if (looking) {
        again = true;
        return;
      }
      looking = true;
      try {
        const found = await look();
        if (found) return finish(() => resolve(found));
      } catch (error) {
        return finish(() => reject(error));
      } finally {
        looking = false;
      }
      if (again) {
        again = false;
        return void check();
      }
      if (!options.changes) timer = setTimeout(() => void check(), everyMs);
    };
    const stopListening = options.changes?.listen(() => void check());
    void check();
  });
}

/**
 * A fake's `waitFor`: the first entry of `list` from index `from` on that matches, looked for again on
 * each change; the error names the predicate and the last entries, which is what a failing test needs.
 */
export function waitForEntry<T>(
  list: readonly T[],
  predicate: (entry: T) => boolean,
  from: number,
  what: string,
  changes: Changes,
  timeoutMs?: number,
): Promise<T> {
  return waitFor(() => list.slice(from).find(predicate), {
    timeoutMs,
    changes,
    message: () =>
      `no ${what} from #${from} on matched ${String(predicate)}; the last ones: ${JSON.stringify(list.slice(-3)).slice(0, 1000)}`,
  });
}
