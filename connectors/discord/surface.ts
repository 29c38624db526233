/** Discord as the chat core sees it: chats are channel ids, or `user:<user_id>` for a user's DM; Markdown as written. */
import {
  type APIActionRowComponent,
  type APIButtonComponent,
  type APIChannel,
  type APIMessage,
  ButtonStyle,
  ComponentType,
  type REST,
  Routes,
} from "discord.js";
import type { InboundStore } from "../../src/store/inbound.js";
import type { ChatSurface, SurfaceMessage } from "../chat/types.js";
import { parseApprovalButton } from "../sdk/buttons.js";
import type { Button } from "../sdk/types.js";

/** Discord's limit on a message's content. */
export const DISCORD_LIMIT = 2000;
/** A typing indicator lasts about 10 s; it is renewed before it fades. */
const TYPING_EVERY_MS = 8000;
/** Edits of a streamed message are at most this often: Discord rate-limits edits per channel. */
const EDIT_EVERY_MS = 1000;
/** Replies never ping anyone: the model cannot @everyone a server. */
const NO_MENTIONS = { parse: [] };

/** Buttons as one action row; approval buttons are green and red and carry `a:<id>` / `d:<id>`. */
function componentsOf(buttons: Button[]): APIActionRowComponent<APIButtonComponent>[] {
  if (!buttons.length) return [];
  const button = (b: Button): APIButtonComponent => {
    const approval = parseApprovalButton(b.id);
    const style = approval ? (approval.approve ? ButtonStyle.Success : ButtonStyle.Danger) : ButtonStyle.Secondary;
    const custom_id = approval ? `${approval.approve ? "a" : "d"}:${approval.approvalId}` : b.id;
    return { type: ComponentType.Button, style, label: b.label, custom_id };
  };
  return [{ type: ComponentType.ActionRow, components: buttons.map(button) }];
}

function bodyOf(message: SurfaceMessage) {
  return {
    content: message.text.slice(0, DISCORD_LIMIT),
    allowed_mentions: NO_MENTIONS,
    ...(message.buttons && { components: componentsOf(message.buttons) }),
  };
}

/**
 * `journal` remembers each user's DM channel, opened once. `typingRest` gives up on a rate limit instead of
 * waiting it out: typing is sent in line with the run's messages, and a reply must not wait behind it.
 */
export function discordSurface(rest: REST, journal: () => InboundStore, typingRest: REST): ChatSurface {
  const dmChannel = async (userId: string): Promise<string> => {
    const key = `discord:dm:${userId}`;
    const known = journal().value(key);
    if (known) return known;
    const channel = (await rest.post(Routes.userChannels(), { body: { recipient_id: userId } })) as APIChannel;
    journal().setValue(key, channel.id);
    return channel.id;
  };
  const channelOf = async (chat: string): Promise<string> => {
    const m = chat.match(/^(?:(user):)?(\d+)$/);
    if (!m?.[2]) throw new Error(`not a Discord channel: ${chat}`);
    return m[1] ? dmChannel(m[2]) : m[2];
  };
  return {
    limits: { text: DISCORD_LIMIT, buttons: true },
    typing: { everyMs: TYPING_EVERY_MS, send: async (chat) => typingRest.post(Routes.channelTyping(await channelOf(chat))) },
    editEveryMs: EDIT_EVERY_MS,
    pressShowsDecision: true,
    async send(chat, message) {
      const sent = (await rest.post(Routes.channelMessages(await channelOf(chat)), { body: bodyOf(message) })) as APIMessage;
      return { id: sent.id };
    },
    async edit(chat, id, message) {
      await rest.patch(Routes.channelMessage(await channelOf(chat), id), { body: bodyOf(message) });
    },
  };
}
