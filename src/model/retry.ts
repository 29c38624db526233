import { ModelError } from "../errors.js";
import { sleep } from "../net/sleep.js";

export interface RetryOptions {
  retries: number;
  baseMs: number;
  maxMs?: number;
  signal?: AbortSignal;
  /** false: a refused connection or failed DNS lookup is not retried (another endpoint will be tried). */
  retryUnreachable?: boolean;
  /** Called before each wait; for logging. */
  onRetry?: (error: ModelError, attempt: number, waitMs: number) => void;
}

/** Capped exponential backoff with full jitter, never below a server's Retry-After. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, retryAfterMs?: number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** attempt);
  const jittered = ceiling / 2 + Math.random() * (ceiling / 2);
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, maxMs * 4));
}

/**
 * Runs `attempt` until it succeeds or fails with a non-retryable ModelError.
 * Only connection refused, 5xx and 429 are retryable: nothing else can succeed by asking again.
 */
export async function withRetry<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  const maxMs = options.maxMs ?? 8000;
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof ModelError) || !err.retryable || i >= options.retries || options.signal?.aborted) throw err;
      if (options.retryUnreachable === false && err.kind === "unreachable") throw err;
      const wait = backoffMs(i, options.baseMs, maxMs, err.retryAfterMs);
      options.onRetry?.(err, i + 1, wait);
      await sleep(wait, options.signal);
      if (options.signal?.aborted) throw new ModelError("aborted", "the request was cancelled");
    }
  }
}
