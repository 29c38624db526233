/**
 * What runs nobody is chatting in (cron jobs, reminders, webhooks) share: approvals are asked in the
 * delivery chat, a failure is told to the owner once per streak, and a tool subset may name MCP tools by
 * glob.
 */
import type { AgentEvent } from "../../src/agent/types.js";
import { MCP_SEPARATOR } from "../../src/config/tool-names.js";
import type { Core } from "../../src/connector.js";
import type { Logger } from "../../src/log.js";
import { isEnabled } from "../../src/mcp/names.js";

/** Approval requests are asked in `target`; the reply itself is delivered when the run ends. */
export function approvalsTo(core: Core, target: string) {
  return (event: AgentEvent) => {
    if (event.type === "approval_requested" || event.type === "approval_decided") core.listenerFor(target)?.(event);
  };
}

/**
 * Tells the owner at `target` once per failure streak, not at every slot or call; `key` is the streak's
 * flag, cleared by the caller when a run succeeds.
 */
export async function tellOwnerOnce(core: Core, log: Logger, key: string, target: string, text: string): Promise<void> {
  if (core.store.inbound.value(key)) return;
  core.store.inbound.setValue(key, String(Date.now()));
  await core.deliver(target, text).catch((err: unknown) => log.error({ err }, "could not tell the owner"));
}

/**
 * A run's `tools` subset with its MCP entries (`home__*`) resolved to the tools the servers offer, once
 * they have listed them (right after a start, a job or hook waits for that).
 */
export async function subsetTools(entries: string[], core: Core): Promise<string[]> {
  await core.toolsKnown();
  const mcp = core
    .tools()
    .map((t) => t.name)
    .filter((name) => isEnabled(name, entries));
  return [...entries.filter((e) => !e.includes(MCP_SEPARATOR)), ...mcp];
}
