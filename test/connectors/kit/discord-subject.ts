/**
 * The built-in Discord connector as a conformance-kit subject: discord.js really connects to the fake
 * Discord (REST and gateway, test/fakes/discord-server.ts), and this driver writes DMs, clicks buttons and
 * reads channels there as the kit's users.
 */
import { KIT_CHATS, type KitSubject, OWNER, STRANGER } from "../../../connectors/kit/subject.js";
import type { Button, SentMessage } from "../../../connectors/sdk/types.js";
import { type DiscordCall, startFakeDiscord } from "../../fakes/discord-server.js";
import { waitFor } from "../../helpers/wait.js";

const USER_IDS: Record<string, string> = { [OWNER]: "2000000000000000042", [STRANGER]: "2000000000000000777" };
const DISCORD_LIMIT = 2000;
/** An interaction answer that edits the clicked message (discord.js `interaction.update`). */
const UPDATE_MESSAGE = 7;

/** Each kit chat is a DM channel of its own (snowflakes), so no two checks' chats share a message. */
const chatIdOf = (chat: string) => String(3_100_000_000_000_000_000n + BigInt(KIT_CHATS.indexOf(chat)));
const userIdOf = (user: string) => USER_IDS[user] ?? "2000000000000000001";

export function discordSubject(): KitSubject {
  return {
    name: "discord",
    profile: {
      strangerNotice: true,
      textApprovals: "not applicable: Discord always shows buttons, so approvals are never asked in text",
      failedSendHealth:
        "health not checked: Discord's health is its gateway connection (the watchdog restarts the daemon on it); " +
        "a channel that refuses messages, such as a user who blocks DMs, is logged and leaves the connector up",
    },
    async open({ control }) {
      const fake = await startFakeDiscord();
      if (control.failSendTo) fake.fail(new RegExp(`^(POST|PATCH) /channels/${chatIdOf(control.failSendTo)}/`), 403, 1_000);
      const received = new Map<string, string>();
      const clicks = new Map<string, string>();
      const key = (chat: string, user: string, text: string) => JSON.stringify([chat, user, text]);
      let starts = 0;
      return {
        connectors: { discord: fake.settings([userIdOf(OWNER)], { stream_replies: true }) },
        // discord.js takes messages once its session is ready, which it marks by registering the slash commands.
        async ready() {
          starts++;
          const registered = () => fake.calls.filter((c) => c.method.startsWith("PUT /applications/")).length >= starts;
          await waitFor(registered, { message: "the Discord client to be ready (slash commands registered)" });
        },
        driver: {
          setup: () => ({ options: {} }),
          inbound({ chat, user, text }) {
            const id = fake.dmWith(userIdOf(user), { content: text, channel_id: chatIdOf(chat) });
            received.set(key(chat, user, text), id);
          },
          // A button stays clickable on a client that has not caught up with the edit that removed it.
          press({ chat, user, button }) {
            const sent = fake.calls.find((c) => isPost(c, chatIdOf(chat)) && buttonsOf(c.body.components).some((b) => b.id === button));
            if (!sent) throw new Error(`no message in chat ${chat} ever showed a button ${button}`);
            clicks.set(fake.click(userIdOf(user), sent.result, button), sent.result.id);
          },
          sent: (chat) => shownIn(fake.calls, chatIdOf(chat), clicks),
          teardown: () => fake.close(),
        },
        limits: () => ({ text: DISCORD_LIMIT, buttons: true, edits: true }),
        userId: userIdOf,
        chatId: chatIdOf,
        async redeliver(chat, user, text) {
          const id = received.get(key(chat, user, text));
          if (id === undefined) throw new Error(`nothing was written in chat ${chat} as "${text}"`);
          fake.redeliver(id);
        },
      };
    },
  };
}

const isPost = (c: DiscordCall, channel: string) => c.method === `POST /channels/${channel}/messages`;

/** What a channel shows: each message the bot sent there, in order, after edits and interaction updates. */
function shownIn(calls: DiscordCall[], channel: string, clicks: Map<string, string>): SentMessage[] {
  const shown = new Map<string, SentMessage>();
  const update = (id: string | undefined, body: { content?: string; components?: unknown[] } | undefined) => {
    const before = id === undefined ? undefined : shown.get(id);
    if (!before || !id || !body) return;
    shown.set(id, {
      ...before,
      ...(body.content !== undefined && { text: body.content }),
      ...(body.components !== undefined && { buttons: buttonsOf(body.components) }),
    });
  };
  for (const call of calls) {
    const edited = call.method.match(/^(PATCH|DELETE) \/channels\/(\d+)\/messages\/(\d+)$/);
    if (isPost(call, channel))
      shown.set(call.result.id, { id: call.result.id, text: call.body.content ?? "", buttons: buttonsOf(call.body.components) });
    else if (edited?.[1] === "PATCH" && edited[2] === channel) update(edited[3], call.body);
    else if (edited?.[1] === "DELETE" && edited[2] === channel) shown.delete(edited[3] as string);
    else if (call.method === "callback" && call.body?.type === UPDATE_MESSAGE) {
      update(clicks.get(call.path.split("/")[2] ?? ""), call.body.data);
    }
  }
  return [...shown.values()];
}

function buttonsOf(rows: unknown): Button[] {
  const list = (rows ?? []) as { components?: { custom_id?: string; label?: string }[] }[];
  return list.flatMap((row) => row.components ?? []).map((b) => ({ id: b.custom_id ?? "", label: b.label ?? "" }));
}
