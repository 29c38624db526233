import type { ToolName } from "../src/config/schema.js";
import { z } from "../src/config/zod.js";
import { ToolError } from "../src/errors.js";
import { defineTool } from "../src/tools/define.js";
import type { ToolDeps } from "../src/tools/types.js";

const BUILT_IN_TARGET = z
  .string()
  .regex(/^(telegram:-?\d+|discord:(user:)?\d+|cli:[\w.-]+)$/, "expected telegram:<chat_id>, discord:<channel_id> or discord:user:<id>");
// Only with plugins configured: without them the tool's schema (and so the prompt) stays as it was.
const PLUGIN_TARGET = z
  .string()
  .regex(
    /^(telegram:-?\d+|discord:(user:)?\d+|cli:[\w.-]+|[a-z0-9_-]+:.+)$/,
    "expected telegram:<chat_id>, discord:<channel_id>, discord:user:<id> or <plugin>:<chat>",
  );

/** Sends a message on the owner's behalf. Always asks first. */
export function createTool(_name: ToolName, deps: ToolDeps) {
  return defineTool({
    name: "send_message",
    description:
      'Send a text message to a chat on the owner\'s behalf (the owner must approve). Targets: telegram:<chat_id>, discord:<channel_id>, discord:user:<user_id>. Example: {"to": "telegram:123456", "text": "Running late"}.',
    input: z.strictObject({
      to: deps.config.connectors.plugins.length ? PLUGIN_TARGET : BUILT_IN_TARGET,
      text: z.string().min(1).max(4000),
    }),
    needsConfirmation: true,
    run: async ({ to, text }) => {
      if (!deps.deliver) throw new ToolError("sending messages is not available here");
      const { messageId } = await deps.deliver(to, text);
      return `Sent to ${to} (message ${messageId}).`;
    },
  });
}
