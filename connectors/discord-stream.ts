import { type APIMessage, type REST, Routes } from "discord.js";
import { splitMarkdown } from "./markdown.js";

/** Discord's limit on a message's content. */
export const DISCORD_LIMIT = 2000;
/** Edits of a streamed message are at most this often: Discord rate-limits edits per channel. */
const EDIT_EVERY_MS = 1000;
/** Replies never ping anyone: the model cannot @everyone a server. */
export const NO_MENTIONS = { parse: [] };

/** How a draft reaches Discord: `queue` runs a task in the channel's send order with the channel id. */
export type ChannelQueue = (what: string, task: (channelId: string) => Promise<unknown>) => void;

/**
 * One message edited as a reply streams in: sent with the first text, edited at most once a second,
 * and finalised with the whole reply (split under 2000 characters, the rest sent as new messages).
 */
export function createDiscordDraft(rest: REST, queue: ChannelQueue) {
  let draft: { id?: string; text: string; shown: string; timer?: NodeJS.Timeout } = { text: "", shown: "" };

  const flush = () => {
    clearTimeout(draft.timer);
    draft.timer = undefined;
    const content = draft.text.trim().slice(0, DISCORD_LIMIT);
    if (!content || content === draft.shown) return;
    draft.shown = content;
    const current = draft;
    queue("stream", async (channelId) => {
      const body = { content, allowed_mentions: NO_MENTIONS };
      if (current.id === undefined) current.id = ((await rest.post(Routes.channelMessages(channelId), { body })) as APIMessage).id;
      else await rest.patch(Routes.channelMessage(channelId, current.id), { body });
    });
  };

  return {
    /** More reply text arrived. */
    add(delta: string): void {
      draft.text += delta;
      if (draft.id === undefined && !draft.timer && !draft.shown) flush();
      else draft.timer ??= setTimeout(flush, EDIT_EVERY_MS);
    },
    /** A tool call ends this message; text after it starts a new one. */
    cut(): void {
      flush();
      draft = { text: "", shown: "" };
    },
    /** Edits the streamed message into the reply's first part and sends the others. */
    finish(reply: string): (channelId: string) => Promise<void> {
      clearTimeout(draft.timer);
      const current = draft;
      return async (channelId) => {
        const [first = "", ...others] = splitMarkdown(reply, DISCORD_LIMIT);
        const body = { content: first, allowed_mentions: NO_MENTIONS };
        if (current.id === undefined) await rest.post(Routes.channelMessages(channelId), { body });
        else if (first !== current.shown) await rest.patch(Routes.channelMessage(channelId, current.id), { body });
        for (const content of others)
          await rest.post(Routes.channelMessages(channelId), { body: { content, allowed_mentions: NO_MENTIONS } });
      };
    },
  };
}
