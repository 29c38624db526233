/** Serializes one chat's API calls so messages and edits arrive in order; a failure is reported, never thrown. */
export function sendQueue(onError: (err: unknown, what: string) => void): (what: string, task: () => Promise<unknown>) => void {
  let chain: Promise<unknown> = Promise.resolve();
  return (what, task) => {
    chain = chain.then(task).catch((err: unknown) => onError(err, what));
  };
}

/** A typing indicator: `tick` now and every `everyMs` (chat networks let it fade) until stopped. */
export function typingIndicator(tick: () => void, everyMs: number): { start(): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      if (timer) return;
      tick();
      timer = setInterval(tick, everyMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
