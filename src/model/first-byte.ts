/**
 * A request's two clocks: the whole answer must arrive within `totalMs`, and its first byte within
 * `firstByteMs` (a server that accepted the connection but never answers is as good as down). The
 * request stops when either runs out or `parent` aborts: through `onCancel` (the Ollama client destroys
 * its node:http request), or through `signal`, an AbortSignal made at first use (the openai SDK takes
 * one). A signal given to node:http costs ~0.08 ms per request between one model answer and the next
 * request (an AbortController, and end-of-stream listeners on the request), while the model sits idle.
 * Like `deadline`, it holds nothing once disposed.
 */
export function requestClock(parent: AbortSignal | undefined, totalMs: number, firstByteMs: number) {
  const startedAt = performance.now();
  let expired: "total" | "first_byte" | undefined;
  let firstByteAt: number | undefined;
  let controller: AbortController | undefined;
  let stopped: { reason: unknown } | undefined;
  let onStop: ((reason: unknown) => void) | undefined;
  const stop = (reason: unknown) => {
    if (stopped) return;
    stopped = { reason };
    controller?.abort(reason);
    onStop?.(reason);
  };
  const onAbort = () => stop(parent?.reason);
  parent?.addEventListener("abort", onAbort, { once: true });
  if (parent?.aborted) stop(parent.reason);
  const expire = (which: "total" | "first_byte", ms: number) => () => {
    expired = which;
    stop(new Error(`timed out after ${ms} ms`));
  };
  const total = setTimeout(expire("total", totalMs), totalMs);
  total.unref();
  let first: NodeJS.Timeout | undefined = setTimeout(expire("first_byte", firstByteMs), firstByteMs);
  first.unref();
  return {
    /** Aborts when the request is to stop. */
    get signal(): AbortSignal {
      if (!controller) {
        controller = new AbortController();
        if (stopped) controller.abort(stopped.reason);
      }
      return controller.signal;
    },
    /** `cancel` is called when the request is to stop, at once if it already is. */
    onCancel(cancel: (reason: unknown) => void): void {
      onStop = cancel;
      if (stopped) cancel(stopped.reason);
    },
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
      onStop = undefined;
      parent?.removeEventListener("abort", onAbort);
    },
  };
}

export type RequestClock = ReturnType<typeof requestClock>;
