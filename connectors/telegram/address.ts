/** Which group messages are meant for the bot, for text and captions alike, and their text without the mention. */
import type { Message, MessageEntity } from "grammy/types";

type Me = { id: number; username: string };

/**
 * The text of a message meant for the bot: any private message; in groups only when the bot is
 * mentioned (the mention is removed), the message replies to the bot, or it is a command with the bot's
 * username (`/help@bot`, as Telegram's command menu writes it in groups). A command with another bot's
 * username is for that bot. Undefined otherwise.
 */
export function addressedText(message: Message.TextMessage, me: Me): string | undefined {
  const commandFor = commandUsername(message);
  if (commandFor !== undefined) return commandFor.toLowerCase() === me.username.toLowerCase() ? message.text : undefined;
  return addressed(message, message.text, message.entities ?? [], me);
}

/** The caption of a photo, voice note or file meant for the bot, as for text (captions carry no commands). */
export function addressedCaption(message: Message, me: Me): string | undefined {
  return addressed(message, message.caption ?? "", message.caption_entities, me);
}

/**
 * A mention is Telegram's mention entity of the bot's whole username ("@hermes_bot2" does not address
 * "@hermes_bot"); a caption sent without entities is read for the username itself.
 */
function addressed(message: Message, body: string, entities: MessageEntity[] | undefined, me: Me): string | undefined {
  if (message.chat.type === "private") return body;
  const mention = () => new RegExp(`@${me.username}(?![A-Za-z0-9_])`, "ig");
  const own = `@${me.username}`.toLowerCase();
  const mentioned = entities
    ? entities.some((e) => e.type === "mention" && body.slice(e.offset, e.offset + e.length).toLowerCase() === own)
    : mention().test(body);
  if (mentioned) return body.replace(mention(), "").trim();
  if (message.reply_to_message?.from?.id === me.id) return body;
  return undefined;
}

/** The username a leading `/command@username` is addressed to, if the message starts with one. */
function commandUsername(message: Message.TextMessage): string | undefined {
  const entity = message.entities?.find((e) => e.type === "bot_command" && e.offset === 0);
  if (!entity) return undefined;
  return message.text.slice(0, entity.length).match(/^\/\w+@(\w+)$/)?.[1];
}
