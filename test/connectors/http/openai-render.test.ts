/**
 * The text an OpenAI client reads, event by event: each line (a tool's outcome, an approval asked or
 * decided) is apart from the model's words before it by a blank line, also when those words end with a
 * line break of their own, and a run that ends with no reply adds nothing.
 */
import { expect, it } from "vitest";
import { createReplyText } from "../../../connectors/http/openai-render.js";
import type { AgentEvent } from "../../../src/agent/types.js";

const runId = "run_1";
const text = (delta: string) => ({ type: "text", runId, delta }) as AgentEvent;
const call = { type: "tool_call", runId, tool: "clock" } as unknown as AgentEvent;
const done = { type: "tool_result", runId, tool: "clock", ok: true, summary: "" } as unknown as AgentEvent;

/** The streamed text of these events and the run's reply. */
function streamed(events: AgentEvent[], reply: string): string {
  const r = createReplyText({ activity: true, approvalsTo: "" });
  return events.map((e) => r.onEvent(e)).join("") + r.finish(reply);
}

it("keeps a blank line between the words before a tool call and its line, whether they end with a line break or not", () => {
  expect(streamed([text("Let me check."), call, done, text("Noon.")], "Noon.")).toBe("Let me check.\n\n🔧 clock: done\n\nNoon.");
  expect(streamed([text("Let me check.\n"), call, done, text("Noon.")], "Noon.")).toBe("Let me check.\n\n🔧 clock: done\n\nNoon.");
  expect(streamed([text("Let me check.\n\n"), call, done, text("Noon.")], "Noon.")).toBe("Let me check.\n\n🔧 clock: done\n\nNoon.");
  // Lines one after another stay together.
  expect(streamed([call, done, call, done, text("Noon.")], "Noon.")).toBe("🔧 clock: done\n🔧 clock: done\n\nNoon.");
});

it("adds nothing at the end of a run whose reply is empty", () => {
  expect(streamed([text("Let me check."), call, done], "")).toBe("Let me check.\n\n🔧 clock: done\n");
  expect(streamed([], "")).toBe("");
});
