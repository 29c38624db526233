/** Skills as Discord commands: the menu entries, `/<skill-name> text` typed, and a run started from the menu. */
import type { ChatInputCommandInteraction } from "discord.js";
import type { Core } from "../src/connector.js";
import type { Logger } from "../src/log.js";
import { matchSkillCommand, skillCommands, withSkill } from "../src/skills/commands.js";
import { createChannelRenderer, type DiscordDeps } from "./discord-render.js";

/** The connector's own commands: a skill of the same name is not offered as one. */
const BUILT_IN = ["new", "compact", "stop", "status", "whoami", "help", "start"];

/** The user-invocable skills as slash commands with a text option, after the built-in ones and under Discord's 100. */
export function skillMenu(core: Core) {
  const text = { type: 3, name: "text", description: "What to do with the skill", required: false };
  return skillCommands(core.skills?.(), "discord", BUILT_IN).map((c) => ({ ...c, options: [text] }));
}

/** The message for the model when `typed` is `/<skill-name> text`; undefined for anything else. */
export function skillText(core: Core, typed: string): string | undefined {
  const invoked = matchSkillCommand(core.skills?.(), typed, BUILT_IN);
  return invoked && withSkill(invoked.skill, invoked.text);
}

/**
 * A skill's slash command: echoed as the interaction's answer (Discord wants one within 3 s), the reply
 * follows in the channel. False when the command is not a skill's.
 */
export async function runSkillCommand(
  parts: { core: Core; deps: DiscordDeps; log: Logger },
  interaction: ChatInputCommandInteraction,
): Promise<boolean> {
  const { core, deps, log } = parts;
  const typed = `/${interaction.commandName} ${interaction.options.getString("text") ?? ""}`.trim();
  const text = skillText(core, typed);
  if (text === undefined) return false;
  await interaction.reply({ content: typed.slice(0, 2000) });
  const sessionKey = `discord:${interaction.channelId}`;
  const user = interaction.user;
  const names = core.config().connectors.discord.user_names;
  const submitted = core.submit({
    sessionKey,
    text,
    source: "discord",
    channel: sessionKey,
    listener: createChannelRenderer(deps, async () => interaction.channelId),
    sender: { id: `discord:${user.id}`, name: names[user.id] ?? user.globalName ?? user.username },
    group: interaction.guildId !== null,
  });
  submitted.done.catch((err: unknown) => log.error({ err }, "discord run failed"));
  return true;
}
