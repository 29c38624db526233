/**
 * Hands out turns of the event loop, one at a time and in order. A burst of work (a hundred chat
 * messages in one getUpdates batch, each recorded, each a run whose prompt is built) done in one go
 * holds the thread for a hundred milliseconds and more; taken one piece per turn, a model answer that
 * arrives meanwhile is read, and the next model request sent, between two pieces.
 */
export class Turns {
  private tail: Promise<void> = Promise.resolve();

  /** Resolves at the caller's turn: after every earlier caller's, each in a later pass of the event loop. */
  next(): Promise<void> {
    const turn = this.tail.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    this.tail = turn;
    return turn;
  }
}
