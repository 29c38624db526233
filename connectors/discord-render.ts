import {
  type APIActionRowComponent,
  type APIButtonComponent,
  type APIMessage,
  ButtonStyle,
  ComponentType,
  type REST,
  Routes,
} from "discord.js";
import type { AgentEvent, EventListener } from "../src/agent/types.js";
import type { Logger } from "../src/log.js";
import type { Store } from "../src/store/store.js";
import { sendQueue, typingIndicator } from "./chat/queue.js";
import { type Decision, decisionText } from "./chat/texts.js";
import { createDiscordDraft, DISCORD_LIMIT, NO_MENTIONS } from "./discord-stream.js";
import { splitMarkdown } from "./markdown.js";

/** A typing indicator lasts about 10 s; it is renewed before it fades. */
const TYPING_EVERY_MS = 8000;

export interface DiscordDeps {
  rest: REST;
  store: Store;
  log: Logger;
  /** Edit one message as the reply streams in (at most about once a second). */
  stream?: boolean;
}

/** Sends Markdown as one or more messages under 2000 characters, in order; returns their ids. */
export async function sendText(rest: REST, channelId: string, text: string): Promise<string[]> {
  const ids: string[] = [];
  for (const content of splitMarkdown(text, DISCORD_LIMIT)) {
    const sent = (await rest.post(Routes.channelMessages(channelId), { body: { content, allowed_mentions: NO_MENTIONS } })) as APIMessage;
    ids.push(sent.id);
  }
  return ids;
}

export function approvalButtons(approvalId: string): APIActionRowComponent<APIButtonComponent>[] {
  return [
    {
      type: ComponentType.ActionRow,
      components: [
        { type: ComponentType.Button, style: ButtonStyle.Success, label: "Approve", custom_id: `a:${approvalId}` },
        { type: ComponentType.Button, style: ButtonStyle.Danger, label: "Deny", custom_id: `d:${approvalId}` },
      ],
    },
  ];
}

/** Fits text in one message, keeping its last two lines (for an approval: the reason and the deadline). */
export function clip(text: string, limit = DISCORD_LIMIT): string {
  if (text.length <= limit) return text;
  const tail = text.split("\n").slice(-2).join("\n");
  return `${text.slice(0, Math.max(0, limit - tail.length - 2))}…\n${tail}`.slice(0, limit);
}

/** The text of a decided approval message, for an edit or an interaction update. */
export function decidedContent(deps: DiscordDeps, approvalId: string, decision: Decision, by: string): string | undefined {
  const approval = deps.store.approvals.get(approvalId);
  return approval ? clip(decisionText(approval, decision, by)) : undefined;
}

/** Edits an approval message to show the decision and who made it, and removes its buttons. */
export async function showDecision(deps: DiscordDeps, approvalId: string, decision: Decision, by: string): Promise<void> {
  const [channel, message] = (deps.store.approvals.get(approvalId)?.message_ref ?? "").split(":");
  const content = decidedContent(deps, approvalId, decision, by);
  if (!channel || !message || content === undefined) return;
  await deps.rest.patch(Routes.channelMessage(channel, message), { body: { content, components: [] } });
}

/**
 * Renders one run's events into a Discord channel: typing while it works, the reply streamed into one
 * message (with `deps.stream`), approval requests with buttons, decisions edited into them, the final
 * reply split under 2000 characters. `channel` resolves
 * the channel id (for a DM target, opening the DM first). API calls are serialized. Never throws.
 */
export function createChannelRenderer(deps: DiscordDeps, channel: () => Promise<string>): EventListener {
  const queue = sendQueue((err, what) => deps.log.warn({ err, what }, "discord send failed"));
  const run = (what: string, task: (channelId: string) => Promise<unknown>) => queue(what, async () => task(await channel()));
  const typing = typingIndicator(() => run("typing", (id) => deps.rest.post(Routes.channelTyping(id))), TYPING_EVERY_MS);
  const draft = createDiscordDraft(deps.rest, run);

  return (event: AgentEvent) => {
    switch (event.type) {
      case "run_start":
        typing.start();
        break;
      case "text":
        if (deps.stream) draft.add(event.delta);
        break;
      case "tool_call":
        draft.cut();
        break;
      case "run_end": {
        typing.stop();
        const send = draft.finish(event.reply);
        run("run_end", async (id) => {
          await send(id);
          deps.store.history.markReplySent(event.runId);
        });
        break;
      }
      case "approval_requested":
        typing.stop();
        run("approval", async (id) => {
          const body = { content: clip(event.prompt), components: approvalButtons(event.approvalId), allowed_mentions: NO_MENTIONS };
          const sent = (await deps.rest.post(Routes.channelMessages(id), { body })) as APIMessage;
          deps.store.approvals.setMessageRef(event.approvalId, `${id}:${sent.id}`);
        });
        break;
      case "approval_decided":
        // A click already updated its message through the interaction; other deciders need an edit.
        if (!event.by.startsWith("discord:")) run("decision", () => showDecision(deps, event.approvalId, event.decision, event.by));
        if (event.decision === "approved") typing.start();
        break;
      case "error": {
        typing.stop();
        run(event.type, async (id) => {
          await sendText(deps.rest, id, event.message);
          if (event.runId) deps.store.history.markReplySent(event.runId);
        });
        break;
      }
    }
  };
}
