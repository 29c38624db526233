/** Telegram as the chat core sees it: chats are `<chat_id>` or `<chat_id>:topic:<thread_id>`, replies in Telegram HTML. */
import type { Api } from "grammy";
import { GrammyError } from "grammy";
import type { InlineKeyboardMarkup } from "grammy/types";
import type { Logger } from "../../src/log.js";
import type { ChatSurface, SurfaceMessage } from "../chat/types.js";
import { parseApprovalButton } from "../sdk/buttons.js";
import type { Button } from "../sdk/types.js";
import { formatReply, TELEGRAM_LIMIT } from "./format.js";
import { parseChannel } from "./topics.js";

/** A typing indicator lasts about 5 s. */
const TYPING_EVERY_MS = 4500;
/** Telegram allows about one edit a second per chat. */
const EDIT_EVERY_MS = 1000;

/** The option that keeps a message in a forum topic; nothing for a chat without topics. */
export function inTopic(threadId: number | undefined): { message_thread_id?: number } {
  return threadId === undefined ? {} : { message_thread_id: threadId };
}

/** A core chat (`<chat_id>[:topic:<thread_id>]`) as Telegram's ids; throws for anything else. */
function parseChat(chat: string): { chatId: number; threadId?: number } {
  const parsed = parseChannel(`telegram:${chat}`);
  if (!Number.isFinite(parsed.chatId)) throw new Error(`not a Telegram chat: ${chat}`);
  return parsed;
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

const notModified = (err: unknown) => err instanceof GrammyError && /not modified/.test(err.description);

/** Buttons as an inline keyboard; approval buttons carry `a:<id>` / `d:<id>` (callback data holds at most 64 bytes). */
export function keyboardOf(buttons: Button[]): InlineKeyboardMarkup {
  const data = (id: string) => {
    const approval = parseApprovalButton(id);
    return approval ? `${approval.approve ? "a" : "d"}:${approval.approvalId}` : id;
  };
  return { inline_keyboard: buttons.length ? [buttons.map((b) => ({ text: b.label, callback_data: data(b.id) }))] : [] };
}

/** Drafts, approval requests and decisions are shown as written; replies are formatted. */
const isPlain = (m: SurfaceMessage) => m.draft === true || m.buttons !== undefined;

export function telegramSurface(api: Api, log: Logger): ChatSurface {
  return {
    limits: { text: TELEGRAM_LIMIT, buttons: true },
    split: (text) => formatReply(text).map((c) => c.plain),
    typing: {
      everyMs: TYPING_EVERY_MS,
      send: (chat) => {
        const { chatId, threadId } = parseChat(chat);
        return api.sendChatAction(chatId, "typing", inTopic(threadId));
      },
    },
    editEveryMs: EDIT_EVERY_MS,
    formatsFinal: true,
    async send(chat, message) {
      const { chatId, threadId } = parseChat(chat);
      if (!isPlain(message)) return { id: String((await sendFormatted(api, chatId, message.text, log, threadId))[0]) };
      const markup = message.buttons?.length ? { reply_markup: keyboardOf(message.buttons) } : {};
      const sent = await api.sendMessage(chatId, message.text.slice(0, TELEGRAM_LIMIT), { ...inTopic(threadId), ...markup });
      return { id: String(sent.message_id) };
    },
    async edit(chat, id, message) {
      const { chatId } = parseChat(chat);
      try {
        if (!isPlain(message)) return await editFormatted(api, chatId, Number(id), message.text);
        const markup = message.buttons ? { reply_markup: keyboardOf(message.buttons) } : undefined;
        await api.editMessageText(chatId, Number(id), message.text.slice(0, TELEGRAM_LIMIT), markup);
      } catch (err) {
        if (!notModified(err)) throw err;
      }
    },
  };
}

async function editFormatted(api: Api, chatId: number, messageId: number, text: string): Promise<void> {
  const [first] = formatReply(text);
  if (!first) return;
  try {
    await api.editMessageText(chatId, messageId, first.html, { parse_mode: "HTML", link_preview_options: { is_disabled: true } });
  } catch (err) {
    if (!isFormattingError(err)) throw err;
    await api.editMessageText(chatId, messageId, first.plain.slice(0, TELEGRAM_LIMIT));
  }
}
