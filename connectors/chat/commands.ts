import type { Core } from "../../src/connector.js";
import { type MenuPlatform, matchSkillCommand, type SkillCommand, skillCommands, withSkill } from "../../src/skills/commands.js";
import { RESERVED_COMMANDS } from "./menu.js";
import { statusLines } from "./texts.js";

const HELP =
  "I am hermes, an assistant on the owner's server. Just write to me.\n/new starts a fresh conversation, /compact summarises it so far, /stop stops what I am doing, /status shows whether everything works, /approve <id> and /deny <id> decide a request.";

/** Typed commands a skill cannot take over. */
const NOT_FOR_SKILLS = [...RESERVED_COMMANDS, "approve", "deny"];

/** The chat commands every connector answers the same way; resolves the reply. Never throws. */
export async function runCommand(core: Core, sessionKey: string, by: string, text: string, help = HELP): Promise<string> {
  const [word = "", arg = ""] = text.split(/\s+/);
  const command = word.slice(1).replace(/@.*$/, "").toLowerCase();
  switch (command) {
    case "start":
    case "help":
      return help;
    case "new":
      core.newSession(sessionKey);
      return "Started a new conversation.";
    case "compact":
      return (await core.compact(sessionKey)).message;
    case "stop":
      return core.stop(sessionKey) ? "Stopped." : "Nothing was running.";
    case "status":
      return statusLines(await core.status());
    case "approve":
    case "deny":
      if (!arg) return `Which request? Write /${command} <id>, with the id from the request.`;
      return core.decide(arg, command === "approve", by).message;
    default:
      return "I do not know that command. Try /help.";
  }
}

/** The message for the model when `typed` is `/<skill-name> text`; undefined for anything else. */
export function skillRequest(core: Core, typed: string): string | undefined {
  const invoked = matchSkillCommand(core.skills?.(), typed, NOT_FOR_SKILLS);
  return invoked && withSkill(invoked.skill, invoked.text);
}

/** The user-invocable skills for a network's command menu, after the built-in commands and under its limit. */
export function skillMenu(core: Core, platform: MenuPlatform): SkillCommand[] {
  // A skill named like a typed built-in (/approve, /deny) would be listed but never run: left out too.
  return skillCommands(core.skills?.(), platform, RESERVED_COMMANDS).filter((c) => !NOT_FOR_SKILLS.includes(c.name));
}
