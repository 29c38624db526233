import type { ChatMessage } from "../model/types.js";
import type { Store } from "../store/store.js";
import type { PromptInput, PromptPlan, WindowMark } from "./context.js";

/**
 * Per store, where each session's window stood at its last request (see `planPrompt`). Held in memory:
 * after a restart the first request that does not fit jumps afresh, which costs one re-read.
 */
const marks = new WeakMap<Store, Map<number, WindowMark>>();
/** Sessions remembered per store; the least recently used is forgotten first. */
const MAX_SESSIONS = 1000;

/** The prompt input with the session's window mark and the store's message ids. */
export function withMark(store: Store, sessionId: number, input: PromptInput): PromptInput {
  return { ...input, mark: marks.get(store)?.get(sessionId), idOf: (m) => store.history.messageId(m) };
}

/**
 * The history a prompt for the session is built from: the newest messages, and every one from where the
 * session's window starts, however far back that is. A window always keeps its current turn, so it never
 * starts after the run's first message; without a mark (the first request after a restart) the window
 * reaches back to the start of `runId` (a long run), looked up then.
 */
export function windowHistory(store: Store, sessionId: number, runId?: string): ChatMessage[] {
  const mark = marks.get(store)?.get(sessionId)?.fromId;
  const from = mark ?? (runId === undefined ? undefined : store.history.firstMessageOf(runId));
  return store.history.windowMessages(sessionId, from);
}

/** Remembers where the window of the request just built stands, for the session's next request. */
export function keepMark(store: Store, sessionId: number, plan: PromptPlan): void {
  let byStore = marks.get(store);
  if (!byStore) {
    byStore = new Map();
    marks.set(store, byStore);
  }
  byStore.delete(sessionId);
  if (plan.mark) byStore.set(sessionId, plan.mark);
  if (byStore.size > MAX_SESSIONS) byStore.delete(byStore.keys().next().value as number);
}
