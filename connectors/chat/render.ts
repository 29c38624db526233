import type { AgentEvent, EventListener } from "../../src/agent/types.js";
import type { Logger } from "../../src/log.js";
import type { Store } from "../../src/store/store.js";
import { type Decision, decisionText, sendQueue } from "../chat.js";
import { approvalButtonIds } from "../sdk/buttons.js";
import { splitText } from "../sdk/split.js";
import type { ChatSurface, FaultReporter } from "./types.js";

/** Streamed text is shown at most this often: chat networks rate-limit edits (Telegram ~1/s per chat). */
const EDIT_EVERY_MS = 700;

export interface RenderDeps {
  surface: ChatSurface;
  store: Store;
  log: Logger;
  onFault: FaultReporter;
  /** Called after a network call went through: a connector whose sends work again is healthy again. */
  onSuccess(): void;
}

/** Where an approval request was shown, so the decision can be edited into it (also after a restart). */
export function approvalRef(chat: string, messageId: string): string {
  return JSON.stringify([chat, messageId]);
}

function parseRef(ref: string | null | undefined): [string, string] | undefined {
  try {
    const parsed: unknown = JSON.parse(ref ?? "");
    return Array.isArray(parsed) && parsed.length === 2 ? [String(parsed[0]), String(parsed[1])] : undefined;
  } catch {
    return undefined;
  }
}

/** Sends text split under the limit, in order; resolves the ids. Throws what the network throws. */
export async function sendSplit(surface: ChatSurface, chat: string, text: string): Promise<string[]> {
  const ids: string[] = [];
  for (const part of splitText(text, surface.limits.text)) ids.push((await surface.send(chat, { text: part })).id);
  return ids;
}

/**
 * Renders one run's events into a chat: the reply streamed into one message when the network can edit
 * (split under the limit when it grows past it), approval requests with buttons or in text, decisions
 * edited into them. Calls are serialized so messages arrive in order. Never throws.
 */
export function createRenderer(deps: RenderDeps, chat: string, stream: boolean): EventListener {
  const { surface } = deps;
  const run = sendQueue((err, what) => deps.onFault(what, err));
  const queue = (what: string, task: () => Promise<unknown>) => run(what, () => task().then(deps.onSuccess));
  let draft: { id?: string; text: string; shown: string; timer?: NodeJS.Timeout } = { text: "", shown: "" };
  const canStream = stream && surface.edit !== undefined;

  const flush = () => {
    clearTimeout(draft.timer);
    draft.timer = undefined;
    const text = draft.text.trim().slice(0, surface.limits.text);
    if (!text || text === draft.shown) return;
    draft.shown = text;
    const current = draft;
    queue("stream", async () => {
      if (current.id === undefined) current.id = (await surface.send(chat, { text })).id;
      else await surface.edit?.(chat, current.id, { text });
    });
  };
  const onText = (delta: string) => {
    draft.text += delta;
    if (draft.id === undefined && !draft.shown) flush();
    else draft.timer ??= setTimeout(flush, EDIT_EVERY_MS);
  };
  const finish = (runId: string, reply: string) => {
    clearTimeout(draft.timer);
    const current = draft;
    queue("reply", async () => {
      const [first, ...rest] = splitText(reply, surface.limits.text);
      if (current.id !== undefined && first !== undefined && surface.edit) {
        if (first !== current.shown) await surface.edit(chat, current.id, { text: first });
        for (const part of rest) await surface.send(chat, { text: part });
      } else {
        await sendSplit(surface, chat, reply);
      }
      deps.store.history.markReplySent(runId);
    });
  };
  const askApproval = (event: Extract<AgentEvent, { type: "approval_requested" }>) => {
    queue("approval", async () => {
      const ids = approvalButtonIds(event.approvalId);
      const message = surface.limits.buttons
        ? {
            text: event.prompt,
            buttons: [
              { id: ids.approve, label: "Approve" },
              { id: ids.deny, label: "Deny" },
            ],
          }
        : { text: `${event.prompt}\nReply /approve ${event.approvalId} or /deny ${event.approvalId}` };
      const sent = await surface.send(chat, message);
      deps.store.approvals.setMessageRef(event.approvalId, approvalRef(chat, sent.id));
    });
  };

  return (event: AgentEvent) => {
    switch (event.type) {
      case "text":
        if (canStream) onText(event.delta);
        break;
      case "tool_call":
        if (canStream) flush();
        draft = { text: "", shown: "" };
        break;
      case "approval_requested":
        askApproval(event);
        break;
      case "approval_decided":
        queue("decision", () => showDecision(deps, event.approvalId, event.decision, event.by));
        break;
      case "run_end":
        finish(event.runId, event.reply);
        break;
      case "error":
        queue("error", async () => {
          await surface.send(chat, { text: event.message.slice(0, surface.limits.text) });
          if (event.runId) deps.store.history.markReplySent(event.runId);
        });
        break;
    }
  };
}

/** Edits an approval request into its decision and removes its buttons; nothing where the network cannot edit. */
export async function showDecision(deps: RenderDeps, approvalId: string, decision: Decision, by: string): Promise<void> {
  const approval = deps.store.approvals.get(approvalId);
  const ref = parseRef(approval?.message_ref);
  if (!approval || !ref || !deps.surface.edit || !deps.surface.limits.buttons) return;
  const text = decisionText(approval, decision, by).slice(0, deps.surface.limits.text);
  await deps.surface.edit(ref[0], ref[1], { text, buttons: [] });
}
