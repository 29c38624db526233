import type { Api } from "grammy";
import { GrammyError } from "grammy";
import type { InlineKeyboardMarkup } from "grammy/types";
import type { AgentEvent, EventListener } from "../src/agent/types.js";
import type { Logger } from "../src/log.js";
import type { Store } from "../src/store/store.js";
import { type Decision, decisionText, sendQueue, typingIndicator } from "./chat.js";
import { formatReply, TELEGRAM_LIMIT } from "./telegram-format.js";

const TYPING_EVERY_MS = 4500;
const EDIT_EVERY_MS = 1000;

export interface RenderDeps {
  api: Api;
  store: Store;
  log: Logger;
  /** Edit one message as the reply streams in (at most about once a second). */
  stream: boolean;
}

/** The option that keeps a message in a forum topic; nothing for a chat without topics. */
export function inTopic(threadId: number | undefined): { message_thread_id?: number } {
  return threadId === undefined ? {} : { message_thread_id: threadId };
}

/** Sends text as formatted chunks, each falling back to plain text if Telegram rejects its formatting. */
export async function sendFormatted(api: Api, chatId: number, text: string, log: Logger, threadId?: number): Promise<number[]> {
  const ids: number[] = [];
  const topic = inTopic(threadId);
  for (const chunk of formatReply(text)) {
    try {
      const options = { parse_mode: "HTML", link_preview_options: { is_disabled: true }, ...topic } as const;
      ids.push((await api.sendMessage(chatId, chunk.html, options)).message_id);
    } catch (err) {
      if (!isFormattingError(err)) throw err;
      log.warn({ chatId, detail: (err as GrammyError).description }, "telegram rejected the formatting; sent plain text");
      ids.push((await api.sendMessage(chatId, chunk.plain.slice(0, TELEGRAM_LIMIT), topic)).message_id);
    }
  }
  return ids;
}

export function isFormattingError(err: unknown): boolean {
  return err instanceof GrammyError && err.error_code === 400 && /parse|entit|tag/i.test(err.description);
}

export function approvalKeyboard(approvalId: string): InlineKeyboardMarkup {
  return {
    inline_keyboard: [
      [
        { text: "Approve", callback_data: `a:${approvalId}` },
        { text: "Deny", callback_data: `d:${approvalId}` },
      ],
    ],
  };
}

/**
 * Renders one run's events into a Telegram chat: typing while it works, the reply streamed into one
 * message, approval requests with buttons, decisions edited into them, the final formatted reply.
 * API calls are serialized so messages and edits arrive in order. Never throws. With `threadId` (a forum
 * topic) every message and typing indicator goes to that topic.
 */
export function createChatRenderer(deps: RenderDeps, chatId: number, threadId?: number): EventListener {
  const topic = inTopic(threadId);
  let draft: { id?: number; text: string; shown: string; timer?: NodeJS.Timeout } = { text: "", shown: "" };
  const run = sendQueue((err, what) => deps.log.warn({ err, chatId, what }, "telegram send failed"));
  const typing = typingIndicator(() => run("typing", () => deps.api.sendChatAction(chatId, "typing", topic)), TYPING_EVERY_MS);
  const flushDraft = () => {
    clearTimeout(draft.timer);
    draft.timer = undefined;
    const text = draft.text.trim().slice(0, TELEGRAM_LIMIT);
    if (!text || text === draft.shown) return;
    draft.shown = text;
    const current = draft;
    run("stream", async () => {
      if (current.id === undefined) current.id = (await deps.api.sendMessage(chatId, text, topic)).message_id;
      else await deps.api.editMessageText(chatId, current.id, text);
    });
  };
  const onText = (delta: string) => {
    if (!deps.stream) return;
    draft.text += delta;
    if (draft.id === undefined && !draft.timer && !draft.shown) flushDraft();
    else draft.timer ??= setTimeout(flushDraft, EDIT_EVERY_MS);
  };
  const finish = (runId: string, reply: string) => {
    typing.stop();
    clearTimeout(draft.timer);
    const current = draft;
    run("reply", async () => {
      const chunks = formatReply(reply);
      const first = chunks[0];
      if (current.id !== undefined && first) {
        await editFormatted(deps, chatId, current.id, first.html, first.plain);
        if (chunks.length > 1)
          await sendFormatted(
            deps.api,
            chatId,
            chunks
              .slice(1)
              .map((c) => c.plain)
              .join("\n\n"),
            deps.log,
            threadId,
          );
      } else {
        await sendFormatted(deps.api, chatId, reply, deps.log, threadId);
      }
      deps.store.history.markReplySent(runId);
    });
  };

  return (event: AgentEvent) => {
    switch (event.type) {
      case "run_start":
        typing.start();
        break;
      case "text":
        onText(event.delta);
        break;
      case "tool_call":
        flushDraft();
        draft = { text: "", shown: "" };
        break;
      case "approval_requested":
        typing.stop();
        run("approval", async () => {
          const sent = await deps.api.sendMessage(chatId, event.prompt, { reply_markup: approvalKeyboard(event.approvalId), ...topic });
          deps.store.approvals.setMessageRef(event.approvalId, `${chatId}:${sent.message_id}`);
        });
        break;
      case "approval_decided":
        run("decision", () => showDecision(deps, event.approvalId, event.decision, event.by));
        if (event.decision === "approved") typing.start();
        break;
      case "run_end":
        finish(event.runId, event.reply);
        break;
      case "error":
        typing.stop();
        run("error", async () => {
          await deps.api.sendMessage(chatId, event.message, topic);
          if (event.runId) deps.store.history.markReplySent(event.runId);
        });
        break;
    }
  };
}

async function editFormatted(deps: RenderDeps, chatId: number, messageId: number, html: string, plain: string): Promise<void> {
  try {
    await deps.api.editMessageText(chatId, messageId, html, { parse_mode: "HTML", link_preview_options: { is_disabled: true } });
  } catch (err) {
    if (isFormattingError(err)) await deps.api.editMessageText(chatId, messageId, plain.slice(0, TELEGRAM_LIMIT));
    else if (!(err instanceof GrammyError && /not modified/.test(err.description))) throw err;
  }
}

/** Edits an approval message to show the decision and who made it, and removes its buttons. */
export async function showDecision(deps: RenderDeps, approvalId: string, decision: Decision, by: string): Promise<void> {
  const approval = deps.store.approvals.get(approvalId);
  const [chat, message] = (approval?.message_ref ?? "").split(":");
  if (!approval || !chat || !message) return;
  const text = decisionText(approval, decision, by);
  try {
    await deps.api.editMessageText(Number(chat), Number(message), text, { reply_markup: { inline_keyboard: [] } });
  } catch (err) {
    if (!(err instanceof GrammyError && /not modified/.test(err.description))) throw err;
  }
}
