import { modelClient } from "./client.js";
import { createToolCallTextFilter } from "./tool-call-stream.js";
import { parseToolCallText } from "./tool-call-text.js";
import type { ChatMessage, ChatOptions, ModelClient, ModelRequest, ModelResult, PreparedChat, ToolSpec } from "./types.js";

export type ToolCallFormat = "auto" | "native" | "hermes";

/**
 * Wraps a client with a tool-call format:
 * - native: the API's own tool calling;
 * - hermes: tool signatures in the system prompt inside <tools></tools>, calls parsed from <tool_call>
 *   blocks in the reply, results sent back inside <tool_response>;
 * - auto: native, and when a reply carries no native calls but <tool_call> blocks or a fenced JSON call,
 *   those are parsed (small local models often print their calls).
 */
export function withToolCallFormat(client: ModelClient, format: ToolCallFormat): ModelClient {
  if (format === "native") return client;
  const prepare = (request: ModelRequest): PreparedChat => {
    const wire = format === "hermes" ? toHermesRequest(request, client.provider === "ollama" ? "tool" : "user") : request;
    const send = client.prepare(wire);
    return async (options: ChatOptions = {}): Promise<ModelResult> => {
      const onText = options.onText ? createToolCallTextFilter(options.onText, { fenced: true }) : undefined;
      const result = await send({ ...options, onText });
      if (result.ok) onText?.flush();
      if (!result.ok || result.toolCalls.length > 0) return result;
      const parsed = parseToolCallText(result.text, { fenced: true });
      if (parsed.calls.length === 0) return result;
      return { ...result, text: parsed.text, toolCalls: parsed.calls };
    };
  };
  return modelClient({ ...client, prepare, probe: (signal) => client.probe(signal) });
}

/** Renders a native request in the Hermes function-calling convention. */
export function toHermesRequest(request: ModelRequest, resultRole: "tool" | "user"): ModelRequest {
  const messages: ChatMessage[] = [];
  for (const m of request.messages) {
    if (m.role === "system") messages.push({ role: "system", content: `${m.content}\n\n${hermesToolsBlock(request.tools)}` });
    else if (m.role === "assistant") messages.push({ role: "assistant", content: withCallBlocks(m) });
    else if (m.role === "tool") appendResult(messages, m, resultRole);
    else messages.push(m);
  }
  return { messages, tools: [], ...(request.maxOutputTokens !== undefined && { maxOutputTokens: request.maxOutputTokens }) };
}

export function hermesToolsBlock(tools: ToolSpec[]): string {
  if (tools.length === 0) return "You have no tools in this conversation.";
  const signatures = tools.map((t) => JSON.stringify({ type: "function", function: t })).join("\n");
  return [
    "You can call functions. Their signatures are inside <tools></tools>:",
    `<tools>\n${signatures}\n</tools>`,
    "To call one, reply with a JSON object inside <tool_call></tool_call> tags, one block per call:",
    '<tool_call>\n{"name": "<function-name>", "arguments": {<arguments>}}\n</tool_call>',
    "Each result comes back inside <tool_response></tool_response>. Answer normally when no call is needed.",
  ].join("\n");
}

function withCallBlocks(m: Extract<ChatMessage, { role: "assistant" }>): string {
  const blocks = (m.toolCalls ?? []).map((c) => `<tool_call>\n${JSON.stringify({ name: c.name, arguments: c.args ?? {} })}\n</tool_call>`);
  return [m.content, ...blocks].filter(Boolean).join("\n");
}

/** Consecutive results share one message, as Hermes models were trained. */
function appendResult(messages: ChatMessage[], m: Extract<ChatMessage, { role: "tool" }>, role: "tool" | "user"): void {
  const block = `<tool_response>\n${JSON.stringify({ name: m.toolName, content: m.content })}\n</tool_response>`;
  const last = messages.at(-1);
  if (last && last.role === role && last.content.startsWith("<tool_response>")) {
    messages[messages.length - 1] = { ...last, content: `${last.content}\n${block}` } as ChatMessage;
    return;
  }
  messages.push(
    role === "tool" ? { role: "tool", content: block, toolCallId: m.toolCallId, toolName: m.toolName } : { role: "user", content: block },
  );
}
