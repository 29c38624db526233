/**
 * Forum topics. A message in a topic is answered in that topic: the run's channel carries the topic
 * (`telegram:<chat_id>:topic:<thread_id>`), so replies, approvals and reminders of a run started there
 * stay in it, also after a restart. The session stays the chat's (`telegram:<chat_id>`).
 */
import type { Message } from "grammy/types";

/** The topic a message was written in; undefined outside forum topics (including the General topic). */
export function topicOf(message: Message): number | undefined {
  return message.is_topic_message ? message.message_thread_id : undefined;
}

export function topicChannel(sessionKey: string, threadId: number | undefined): string {
  return threadId === undefined ? sessionKey : `${sessionKey}:topic:${threadId}`;
}

/** `telegram:<chat_id>` or `telegram:<chat_id>:topic:<thread_id>`; chatId is NaN for anything else. */
export function parseChannel(channel: string): { chatId: number; threadId?: number } {
  const match = channel.match(/^telegram:(-?\d+)(?::topic:(\d+))?$/);
  if (!match) return { chatId: Number.NaN };
  const chatId = Number(match[1]);
  return match[2] === undefined ? { chatId } : { chatId, threadId: Number(match[2]) };
}
