import type { ChatMessage } from "../model/types.js";

/** How many recent messages per session are kept in memory at least, and for how many sessions. */
const CACHED_MESSAGES = 400;
const CACHED_SESSIONS = 200;

/** A session's messages in memory: at least `keep` of the newest, or all of them (`whole`) while it has fewer. */
interface Cached {
  messages: ChatMessage[];
  keep: number;
  whole: boolean;
}

/** A session's messages as the database reads them, oldest first. */
export interface MessageReads {
  newest(sessionId: number, limit: number): ChatMessage[];
  from(sessionId: number, fromId: number): ChatMessage[];
}

/**
 * The newest messages of recently active sessions, kept in memory so that a step does not re-read and
 * re-parse history: 400 a session, and more while its prompt window reaches further back.
 */
export class MessageCache {
  private readonly sessions = new Map<number, Cached>();

  constructor(
    private readonly reads: MessageReads,
    private readonly idOf: (m: ChatMessage) => number | undefined,
  ) {}

  /** A message just stored joins its session's entry; an entry half again over its size drops its oldest. */
  appended(sessionId: number, message: ChatMessage): void {
    const cached = this.sessions.get(sessionId);
    if (!cached) return;
    cached.messages.push(message);
    if (cached.messages.length > cached.keep * 1.5) {
      cached.messages.splice(0, cached.messages.length - cached.keep);
      cached.whole = false;
    }
  }

  /** The newest `limit` messages of a session, oldest first. */
  newest(sessionId: number, limit: number): ChatMessage[] {
    const cached = this.sessions.get(sessionId) ?? (limit <= CACHED_MESSAGES ? this.load(sessionId) : undefined);
    if (cached && (limit <= cached.messages.length || cached.whole)) return this.used(sessionId, cached).messages.slice(-limit);
    return this.reads.newest(sessionId, limit);
  }

  /**
   * The newest 400 messages, and every one from `fromId` on when that reaches further back. Those stay in
   * memory as long as the window reaches back to them.
   */
  window(sessionId: number, fromId?: number): ChatMessage[] {
    if (fromId === undefined) return this.newest(sessionId, CACHED_MESSAGES);
    const cached = this.sessions.get(sessionId) ?? this.load(sessionId);
    const oldest = cached.messages[0] && this.idOf(cached.messages[0]);
    if (!cached.whole && (oldest === undefined || oldest > fromId)) {
      const messages = this.reads.from(sessionId, fromId);
      this.used(sessionId, { messages, keep: Math.max(CACHED_MESSAGES, messages.length), whole: false });
      return messages.slice();
    }
    const begin = Math.min(this.indexOf(cached.messages, fromId), Math.max(0, cached.messages.length - CACHED_MESSAGES));
    // Kept as far back as the window reaches now: after a jump, that is less.
    cached.keep = Math.max(CACHED_MESSAGES, cached.messages.length - begin);
    return this.used(sessionId, cached).messages.slice(begin);
  }

  private load(sessionId: number): Cached {
    const messages = this.reads.newest(sessionId, CACHED_MESSAGES);
    return this.used(sessionId, { messages, keep: CACHED_MESSAGES, whole: messages.length < CACHED_MESSAGES });
  }

  /** The index of the first of `messages` (in id order) whose id is `id` or more. */
  private indexOf(messages: ChatMessage[], id: number): number {
    let lo = 0;
    let hi = messages.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.idOf(messages[mid] as ChatMessage) ?? 0) < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Marks `cached` as the session's, most recently used last, so the oldest entry is the one evicted. */
  private used(sessionId: number, cached: Cached): Cached {
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, cached);
    if (this.sessions.size > CACHED_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as number);
    return cached;
  }
}
