import { HttpError, type Transformer } from "grammy";
import { sleep } from "../src/model/retry.js";

/** Pauses between attempts while Telegram cannot be reached: the first, and the longest. */
export interface NetworkPause {
  firstMs: number;
  maxMs: number;
}

/** Once the network is back, a waiting reply goes out within a minute. */
export const NETWORK_PAUSE: NetworkPause = { firstMs: 3000, maxMs: 60_000 };

/**
 * An API transformer: a call that fails because Telegram cannot be reached (no network, DNS, a reset
 * connection: grammY's HttpError) is made again after a pause that doubles up to `pause.maxMs`, until
 * it goes through or `life` ends. grammY's auto-retry does the same with pauses doubling up to an
 * hour, so after a long outage a reply could arrive an hour after the network came back.
 */
export function retryWhileUnreachable(
  life: AbortSignal,
  onPause: (method: string, err: HttpError, pauseMs: number) => void,
  pause: NetworkPause = NETWORK_PAUSE,
): Transformer {
  return async (prev, method, payload, signal) => {
    for (let ms = pause.firstMs; ; ms = Math.min(pause.maxMs, ms * 2)) {
      try {
        return await prev(method, payload, signal);
      } catch (err) {
        if (!(err instanceof HttpError) || life.aborted || signal?.aborted) throw err;
        onPause(method, err, ms);
        await sleep(ms, life);
        if (life.aborted || signal?.aborted) throw err;
      }
    }
  };
}
