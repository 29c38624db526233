/**
 * A run's events as the text an OpenAI client reads. The client gets the reply; before it, one short line
 * per approval asked and decided (always: the text must say what was approved or denied), and with
 * `activity` one line per tool call's outcome. A stream gets the same text piece by piece.
 */
import type { AgentEvent } from "../../src/agent/types.js";
import { summarize } from "../../src/text.js";

export interface ReplyText {
  /** The text to send now for this event (a stream sends it as a delta), or "" when nothing. */
  onEvent(event: AgentEvent): string;
  /** At the run's end: what is still to be sent so that the whole text carries the reply. */
  finish(reply: string): string;
  /** The whole text, lines and reply (for a JSON answer). */
  whole(reply: string): string;
}

export function createReplyText(o: { activity: boolean; approvalsTo: string }): ReplyText {
  const lines: string[] = [];
  /** The model's text since the last line or tool call: the final step's text, once the run ends. */
  let stepText = "";
  /** The end of what was sent so far, for the break before the next piece. */
  let sent = "";
  const emit = (text: string) => {
    if (text) sent = (sent + text).slice(-2);
    return text;
  };
  /** A paragraph break before new text, unless what was sent already ends with one (or nothing was sent). */
  const breakBefore = () => (sent === "" || sent === "\n\n" ? "" : sent.endsWith("\n") ? "\n" : "\n\n");
  /** What was sent last is a line: the next line follows it directly. */
  let afterLine = false;
  const line = (text: string) => {
    lines.push(text);
    // A blank line between the model's words (the step's, cleared by its tool call) and the lines after
    // them, also words that end with one line break.
    const lead = afterLine ? "" : breakBefore();
    stepText = "";
    afterLine = true;
    return emit(`${lead}${text}\n`);
  };
  return {
    onEvent(event) {
      switch (event.type) {
        case "text": {
          // A blank line between the lines, or an earlier step's words, and this step's text.
          const lead = stepText === "" ? breakBefore() : "";
          stepText += event.delta;
          if (event.delta) afterLine = false;
          return emit(lead + event.delta);
        }
        case "tool_call":
          stepText = "";
          return "";
        case "approval_requested":
          return line(
            `⏸ ${event.tool} waits for approval${o.approvalsTo ? ` (asked at ${o.approvalsTo} and on the dashboard)` : " on the dashboard"}`,
          );
        case "approval_decided":
          return line(decisionLine(event.tool, event.decision, event.by));
        case "tool_result":
          return o.activity ? line(`🔧 ${event.tool}: ${event.ok ? "done" : `failed: ${summarize(event.summary, 80)}`}`) : "";
        case "blocked":
          return o.activity ? line(`⛔ ${event.tool} blocked: ${summarize(event.reason, 80)}`) : "";
        default:
          return "";
      }
    },
    finish(reply) {
      // No reply: nothing to end its paragraph for.
      if (!reply.trim()) return "";
      // The reply was streamed as the last step's text; what it has beside it (notices, in front) comes last.
      const streamed = stepText.trim();
      if (streamed && reply.includes(streamed)) {
        const rest = reply.replace(streamed, "").trim();
        return rest ? emit(`${breakBefore()}${rest}`) : "";
      }
      return emit(`${breakBefore()}${reply}`);
    },
    whole(reply) {
      return lines.length ? `${lines.join("\n")}\n\n${reply}` : reply;
    },
  };
}

function decisionLine(tool: string, decision: "approved" | "denied" | "expired", by: string): string {
  if (decision === "approved") return `✅ ${tool} was approved (by ${by})`;
  if (decision === "denied") return `❌ ${tool} was denied (by ${by}); it did not run`;
  return `⌛ ${tool} was not approved in time; it did not run`;
}
