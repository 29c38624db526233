/**
 * The built-in Telegram connector as a conformance-kit subject: grammY really long-polls the fake Bot API
 * (test/fakes/telegram-server.ts), and this driver writes, presses and reads there as the kit's users.
 */
import { KIT_CHATS, type KitSubject, OWNER, STRANGER } from "../../../connectors/kit/subject.js";
import type { Button, SentMessage } from "../../../connectors/sdk/types.js";
import { type Call, startFakeTelegram } from "../../fakes/telegram-server.js";

/** Telegram ids are numbers; the stranger's is one no message text would contain by chance. */
const USER_IDS: Record<string, number> = { [OWNER]: 4242, [STRANGER]: 717171 };
const TELEGRAM_LIMIT = 4096;

/** Each kit chat is a private chat of its own, so no two checks' chats share a message. */
const chatIdOf = (chat: string) => 910_000 + KIT_CHATS.indexOf(chat);
const userIdOf = (user: string) => USER_IDS[user] ?? 1;

export function telegramSubject(): KitSubject {
  return {
    name: "telegram",
    profile: {
      strangerNotice: true,
      textApprovals: "not applicable: Telegram always shows inline buttons, so approvals are never asked in text",
      failedSendHealth:
        "health not checked: Telegram's health is its polling connection (the watchdog restarts the daemon on it); " +
        "a chat that refuses messages, such as a user who blocked the bot, is logged and leaves the connector up",
    },
    async open({ control }) {
      const fake = await startFakeTelegram();
      if (control.failSendTo)
        fake.refuseChat(chatIdOf(control.failSendTo), { status: 403, description: "Forbidden: bot was blocked by the user" });
      const updates = new Map<string, number>();
      const key = (chat: string, user: string, text: string) => JSON.stringify([chat, user, text]);
      return {
        connectors: { telegram: fake.settings([userIdOf(OWNER)], { stream_replies: true }) },
        driver: {
          setup: () => ({ options: {} }),
          inbound({ chat, user, text }) {
            updates.set(key(chat, user, text), fake.sendText(userIdOf(user), text, { chatId: chatIdOf(chat) }));
          },
          // A button stays pressable on a phone that has not caught up with the edit that removed it.
          press({ chat, user, button }) {
            const messageId = messageWithButton(fake.calls, chatIdOf(chat), button);
            if (messageId === undefined) throw new Error(`no message in chat ${chat} ever showed a button ${button}`);
            fake.press(userIdOf(user), chatIdOf(chat), messageId, button);
          },
          sent: (chat) => shownIn(fake.calls, chatIdOf(chat)),
          teardown: () => fake.close(),
        },
        limits: () => ({ text: TELEGRAM_LIMIT, buttons: true, edits: true }),
        userId: (user) => String(userIdOf(user)),
        chatId: (chat) => String(chatIdOf(chat)),
        async redeliver(chat, user, text) {
          const updateId = updates.get(key(chat, user, text));
          if (updateId === undefined) throw new Error(`nothing was written in chat ${chat} as "${text}"`);
          fake.redeliver(updateId);
        },
      };
    },
  };
}

/** What a chat shows: each message the bot sent there, in order, after its edits. */
function shownIn(calls: Call[], chatId: number): SentMessage[] {
  const shown = new Map<number, SentMessage>();
  for (const call of calls) {
    if (Number(call.params.chat_id) !== chatId) continue;
    const id = Number(call.params.message_id);
    const markup = call.params.reply_markup;
    if (call.method === "sendMessage") {
      shown.set(call.result.message_id, { id: String(call.result.message_id), text: call.params.text, buttons: buttonsOf(markup) });
    } else if (call.method === "editMessageText" && shown.has(id)) {
      const before = shown.get(id) as SentMessage;
      shown.set(id, { ...before, text: call.params.text, ...(markup && { buttons: buttonsOf(markup) }) });
    } else if (call.method === "editMessageReplyMarkup" && shown.has(id)) {
      shown.set(id, { ...(shown.get(id) as SentMessage), buttons: buttonsOf(markup) });
    } else if (call.method === "deleteMessage") {
      shown.delete(id);
    }
  }
  return [...shown.values()];
}

/** The message in the chat that carried `button` (now or before an edit). */
function messageWithButton(calls: Call[], chatId: number, button: string): number | undefined {
  const call = calls.find(
    (c) =>
      c.method === "sendMessage" && Number(c.params.chat_id) === chatId && buttonsOf(c.params.reply_markup).some((b) => b.id === button),
  );
  return call?.result.message_id;
}

function buttonsOf(markup: { inline_keyboard?: { text: string; callback_data?: string }[][] } | undefined): Button[] {
  return (markup?.inline_keyboard ?? []).flat().map((b) => ({ id: b.callback_data ?? "", label: b.text }));
}
