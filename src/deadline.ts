/**
 * An abort signal that fires when `parent` aborts or `ms` pass, whichever comes first. Unlike
 * AbortSignal.timeout/any, it holds nothing once disposed: a daemon making thousands of requests
 * must not keep a timer and a listener alive per request for the whole timeout.
 */
export function deadline(parent: AbortSignal | undefined, ms: number) {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(parent?.reason);
  parent?.addEventListener("abort", onAbort, { once: true });
  if (parent?.aborted) controller.abort(parent.reason);
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`timed out after ${ms} ms`));
  }, ms);
  timer.unref();
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose: () => {
      clearTimeout(timer);
      parent?.removeEventListener("abort", onAbort);
    },
  };
}

/** Waits for `work`, but for no longer than `ms`; `work` goes on either way (its failure is the caller's to handle). */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([work, waited]);
  clearTimeout(timer);
}
