/**
 * A request's clocks: the whole answer must arrive within `totalMs`, its first byte within `firstByteMs`
 * (a server that accepted the connection but never answers is as good as down), and after that no gap
 * between bytes may be as long again (a stream that stalls holds the model slot as surely as one that
 * never starts).
 * Like `deadline`, it holds nothing once disposed.
 */
export function requestClock(parent: AbortSignal | undefined, totalMs: number, firstByteMs: number) {
  const controller = new AbortController();
  const startedAt = performance.now();
  let expired: "total" | "first_byte" | "idle" | undefined;
  let firstByteAt: number | undefined;
  const onAbort = () => controller.abort(parent?.reason);
  parent?.addEventListener("abort", onAbort, { once: true });
  if (parent?.aborted) controller.abort(parent.reason);
  const expire = (which: "total" | "first_byte" | "idle", ms: number) => () => {
    expired = which;
    controller.abort(new Error(`timed out after ${ms} ms`));
  };
  const total = setTimeout(expire("total", totalMs), totalMs);
  total.unref();
  let first: NodeJS.Timeout | undefined = setTimeout(expire("first_byte", firstByteMs), firstByteMs);
  first.unref();
  let idle: NodeJS.Timeout | undefined;
  return {
    signal: controller.signal,
    /** Which clock ran out, if one did. */
    expired: () => expired,
    /** Bytes arrived: stops the first-byte clock at the first call and restarts the idle clock at each. */
    firstByte: () => {
      if (first === undefined) {
        idle?.refresh();
        return;
      }
      clearTimeout(first);
      first = undefined;
      firstByteAt = performance.now();
      if (!controller.signal.aborted) {
        idle = setTimeout(expire("idle", firstByteMs), firstByteMs);
        idle.unref();
      }
    },
    firstByteMs: () => (firstByteAt === undefined ? undefined : Math.round(firstByteAt - startedAt)),
    dispose: () => {
      clearTimeout(total);
      clearTimeout(first);
      clearTimeout(idle);
      parent?.removeEventListener("abort", onAbort);
    },
  };
}

export type RequestClock = ReturnType<typeof requestClock>;
