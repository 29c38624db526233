/**
 * The note the runner appends to each user message for the model (`text\n\n(Current time: …)`, see
 * agent/runner.ts and daemon.ts's timeNote). It is stored with the message, and sent again with it, so
 * every request is a prefix of the next; it is not the person's own words, and the views that show
 * those words leave it out.
 */
const TIME_NOTE = /\n\n\(Current time: [^\n]*\)$/;

/** A user message's text without the time note the runner appended to it. */
export function withoutTimeNote(content: string): string {
  return content.replace(TIME_NOTE, "");
}
