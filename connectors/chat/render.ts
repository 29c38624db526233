import type { AgentEvent, EventListener } from "../../src/agent/types.js";
import { shownWhole } from "../../src/gate/shown-args.js";
import type { Logger } from "../../src/log.js";
import type { ApprovalRow } from "../../src/store/approvals.js";
import type { Store } from "../../src/store/store.js";
import { approvalButtonIds } from "../sdk/buttons.js";
import { splitText } from "../sdk/split.js";
import { sendQueue, typingIndicator } from "./queue.js";
import { type Decision, decisionText, fitText } from "./texts.js";
import type { ChatSurface, FaultReporter } from "./types.js";

/** Streamed text is shown at most this often unless the network says otherwise (Telegram ~1/s per chat). */
const EDIT_EVERY_MS = 700;

export interface RenderDeps {
  surface: ChatSurface;
  store: Store;
  log: Logger;
  onFault: FaultReporter;
  /** Called after a network call went through: a connector whose sends work again is healthy again. */
  onSuccess(): void;
  /** Approvals being decided by a press the network answers with the decided message (see ChatSurface). */
  pressed: Set<string>;
}

/** Where an approval request was shown, so the decision can be edited into it (also after a restart). */
export function approvalRef(chat: string, messageId: string): string {
  return JSON.stringify([chat, messageId]);
}

/** `[chat, id]`; or `chat:id`, as Telegram and Discord wrote it before they shared this flow. */
function parseRef(ref: string | null | undefined): [string, string] | undefined {
  try {
    const parsed: unknown = JSON.parse(ref ?? "");
    return Array.isArray(parsed) && parsed.length === 2 ? [String(parsed[0]), String(parsed[1])] : undefined;
  } catch {
    const at = ref?.lastIndexOf(":") ?? -1;
    return ref && at > 0 && at < ref.length - 1 ? [ref.slice(0, at), ref.slice(at + 1)] : undefined;
  }
}

export function splitFor(surface: ChatSurface, text: string): string[] {
  return surface.split ? surface.split(text) : splitText(text, surface.limits.text);
}

/** Sends text split under the limit, in order; resolves the ids. Throws what the network throws. */
export async function sendSplit(surface: ChatSurface, chat: string, text: string, replyTo?: string): Promise<string[]> {
  const ids: string[] = [];
  for (const part of splitFor(surface, text))
    ids.push((await surface.send(chat, { text: part, ...(replyTo !== undefined && { replyTo }) })).id);
  return ids;
}

/**
 * Renders one run's events into a chat: typing while it works, the reply streamed into one message when
 * the network can edit (split under the limit when it grows past it), approval requests with buttons or
 * in text, decisions edited into them. Calls are serialized so messages arrive in order. Never throws.
 */
export function createRenderer(deps: RenderDeps, chat: string, stream: boolean, replyTo?: string): EventListener {
  const { surface } = deps;
  // Every message of the run says which inbound message it answers (mail threads under that one).
  const answering = replyTo === undefined ? {} : { replyTo };
  const run = sendQueue((err, what) => deps.onFault(what, err));
  const queue = (what: string, task: () => Promise<unknown>) => run(what, () => task().then(deps.onSuccess));
  const typing =
    surface.typing && typingIndicator(() => run("typing", () => surface.typing?.send(chat) ?? Promise.resolve()), surface.typing.everyMs);
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
      if (current.id === undefined) current.id = (await surface.send(chat, { text, draft: true, ...answering })).id;
      else await surface.edit?.(chat, current.id, { text, draft: true });
    });
  };
  const onText = (delta: string) => {
    draft.text += delta;
    if (draft.id === undefined && !draft.timer && !draft.shown) flush();
    else draft.timer ??= setTimeout(flush, surface.editEveryMs ?? EDIT_EVERY_MS);
  };
  const finish = (runId: string, reply: string, stopReason: string) => {
    typing?.stop();
    clearTimeout(draft.timer);
    const current = draft;
    // Stopped on the owner's word, which /stop has already answered ("Stopped."): no second "Stopped.", and
    // the part of the reply streamed so far stays, marked as cut short (split as a reply is: formatted, the
    // draft may be longer than the network takes).
    const aborted = stopReason === "aborted";
    const text = aborted ? `${current.shown} …(stopped)` : reply;
    queue("reply", async () => {
      if (!aborted || (current.id !== undefined && current.shown)) {
        const [first, ...rest] = splitFor(surface, text);
        if (current.id !== undefined && first !== undefined && surface.edit) {
          if (first !== current.shown || surface.formatsFinal) await surface.edit(chat, current.id, { text: first });
          for (const part of rest) await surface.send(chat, { text: part, ...answering });
        } else {
          await sendSplit(surface, chat, text, replyTo);
        }
      }
      deps.store.history.markReplySent(runId);
    });
  };
  const askApproval = (event: Extract<AgentEvent, { type: "approval_requested" }>) => {
    typing?.stop();
    queue("approval", async () => {
      const { text, buttons } = approvalMessage(event, surface.limits);
      const sent = await surface.send(chat, surface.limits.buttons ? { text, buttons, ...answering } : { text, ...answering });
      deps.store.approvals.setMessageRef(event.approvalId, approvalRef(chat, sent.id));
    });
  };
  const onDecided = (event: Extract<AgentEvent, { type: "approval_decided" }>) => {
    if (!deps.pressed.has(event.approvalId)) queue("decision", () => showDecision(deps, event.approvalId, event.decision, event.by));
    if (event.decision === "approved") typing?.start();
  };

  return (event: AgentEvent) => {
    switch (event.type) {
      case "run_start":
        typing?.start();
        break;
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
        onDecided(event);
        break;
      case "run_end":
        finish(event.runId, event.reply, event.stopReason);
        break;
      case "error":
        typing?.stop();
        queue("error", async () => {
          await surface.send(chat, { text: event.message.slice(0, surface.limits.text), ...answering });
          if (event.runId) deps.store.history.markReplySent(event.runId);
        });
        break;
    }
  };
}

/**
 * An approval request as one message. The owner approves only what the message shows: a call with a value
 * too long to show whole (see shownWhole), or whose request does not fit the network's message, is sent
 * without Approve, saying where the whole call can be read and decided; Deny stays.
 */
function approvalMessage(
  event: Extract<AgentEvent, { type: "approval_requested" }>,
  limits: ChatSurface["limits"],
): { text: string; buttons: { id: string; label: string }[] } {
  const ids = approvalButtonIds(event.approvalId);
  const approve = { id: ids.approve, label: "Approve" };
  const deny = { id: ids.deny, label: "Deny" };
  const whole = limits.buttons ? event.prompt : `${event.prompt}\nReply /approve ${event.approvalId} or /deny ${event.approvalId}`;
  if (whole.length <= limits.text && shownWhole(event.args)) return { text: whole, buttons: [approve, deny] };
  const elsewhere = "It cannot be approved here: read and decide it in a terminal (`hermes approvals`) or on the dashboard.";
  const refuse = limits.buttons ? [] : [`Reply /deny ${event.approvalId} to refuse it.`];
  const shown = [event.prompt, `Some of its arguments are too long to show here in full. ${elsewhere}`, ...refuse].join("\n");
  if (shown.length <= limits.text) return { text: shown, buttons: [deny] };
  // The prompt's last two lines: why it asks, and until when.
  const why = event.prompt.split("\n").slice(-2).join("\n");
  const text = [`hermes wants to run ${event.tool}, with arguments too long to show here. ${elsewhere}`, why, ...refuse].join("\n");
  return { text: fitText(text, limits.text), buttons: [deny] };
}

/** The text an approval message shows once decided, fitted in one message. */
export function decidedText(deps: RenderDeps, approvalId: string, decision: Decision, by: string): string | undefined {
  const approval = deps.store.approvals.get(approvalId);
  return approval && fittedDecision(deps, approval, decision, by);
}

const fittedDecision = (deps: RenderDeps, approval: ApprovalRow, decision: Decision, by: string) =>
  fitText(decisionText(approval, decision, by), deps.surface.limits.text);

/** Edits an approval request into its decision and removes its buttons; nothing where the network cannot edit. */
export async function showDecision(deps: RenderDeps, approvalId: string, decision: Decision, by: string): Promise<void> {
  if (!deps.surface.edit || !deps.surface.limits.buttons) return;
  const approval = deps.store.approvals.get(approvalId);
  const ref = parseRef(approval?.message_ref);
  if (!approval || !ref) return;
  await deps.surface.edit(ref[0], ref[1], { text: fittedDecision(deps, approval, decision, by), buttons: [] });
}
