/**
 * A request's two clocks: the whole answer must arrive within `totalMs`, and its first byte within
 * `firstByteMs` (a server that accepted the connection but never answers is as good as down).
 * Like `deadline`, it holds nothing once disposed.
 */
export function requestClock(parent: AbortSignal | undefined, totalMs: number, firstByteMs: number) {
  const controller = new AbortController();
  const startedAt = performance.now();
  let expired: "total" | "first_byte" | undefined;
  let firstByteAt: number | undefined;
  const onAbort = () => controller.abort(parent?.reason);
  parent?.addEventListener("abort", onAbort, { once: true });
  if (parent?.aborted) controller.abort(parent.reason);
  const expire = (which: "total" | "first_byte", ms: number) => () => {
    expired = which;
    controller.abort(new Error(`timed out after ${ms} ms`));
  };
  const total = setTimeout(expire("total", totalMs), totalMs);
  total.unref();
  let first: NodeJS.Timeout | undefined = setTimeout(expire("first_byte", firstByteMs), firstByteMs);
  first.unref();
  return {
    signal: controller.signal,
    /** Which clock ran out, if one did. */
    expired: () => expired,
    /** Stops the first-byte clock; the first call counts. */
    firstByte: () => {
      if (first === undefined) return;
      clearTimeout(first);
      first = undefined;
      firstByteAt = performance.now();
    },
    firstByteMs: () => (firstByteAt === undefined ? undefined : Math.round(firstByteAt - startedAt)),
    dispose: () => {
      clearTimeout(total);
      clearTimeout(first);
      parent?.removeEventListener("abort", onAbort);
    },
  };
}

export type RequestClock = ReturnType<typeof requestClock>;
