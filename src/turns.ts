/**
 * Hands out turns of the event loop, one per pass and in order. A burst of work (a hundred chat
 * messages in one getUpdates batch, each recorded, each a run whose prompt is built) done in one go
 * holds the thread for a hundred milliseconds and more; taken one piece per pass, a model answer that
 * arrives meanwhile is read, and the next model request sent, between two pieces. A caller with no
 * one ahead of it in this pass goes at once: a lone message waits for nothing.
 */
export class Turns {
  private tail: Promise<void> = Promise.resolve();
  private waiting = 0;
  private passTaken = false;

  /** Resolves at the caller's turn: after every earlier caller's, at most one per pass of the event loop. */
  next(): Promise<void> {
    if (!this.passTaken && this.waiting === 0) {
      this.takePass();
      return Promise.resolve();
    }
    this.waiting++;
    const turn = this.tail.then(
      () =>
        new Promise<void>((resolve) =>
          setImmediate(() => {
            this.waiting--;
            this.takePass();
            resolve();
          }),
        ),
    );
    this.tail = turn;
    return turn;
  }

  private takePass(): void {
    this.passTaken = true;
    setImmediate(() => {
      this.passTaken = false;
    });
  }
}
