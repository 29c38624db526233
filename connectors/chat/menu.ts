/**
 * The chat command menu: Telegram's `setMyCommands` and Discord's application (slash) commands list
 * these: the built-ins first, then the user-invocable skills (`skillMenu`, capped under each platform's limit).
 */
export interface MenuCommand {
  /** Lower-case letters, digits and `_`, 1–32 characters (what both platforms accept). */
  name: string;
  description: string;
}

const BUILTIN_COMMANDS: readonly MenuCommand[] = [
  { name: "new", description: "Start a fresh conversation" },
  { name: "stop", description: "Stop what I am doing" },
  { name: "status", description: "Is everything working?" },
  { name: "compact", description: "Summarise our conversation so far" },
  { name: "whoami", description: "Your id here, and whether you may use me" },
  { name: "help", description: "What I can do" },
];

/** The commands a connector answers itself (the menu's and /start): a skill of the same name is not offered as one. */
export const RESERVED_COMMANDS: readonly string[] = [...BUILTIN_COMMANDS.map((c) => c.name), "start"];

/** The menu's built-in commands, descriptions cut to `maxDescription`; skills' commands follow them (see ./commands.ts, `skillMenu`). */
export function menuCommands(maxDescription: number): MenuCommand[] {
  return BUILTIN_COMMANDS.map((c) => ({ name: c.name, description: c.description.slice(0, maxDescription) }));
}

/** What `/whoami` answers: the id, whether this user may use hermes, and nothing else. */
export function whoamiText(platform: string, id: string | number | undefined, allowed: boolean): string {
  if (id === undefined) return "I cannot see who you are here.";
  return allowed
    ? `Your ${platform} id is ${id}. You are allowed to use this assistant.`
    : `Your ${platform} id is ${id}. You are not allowed to use this assistant; the owner can pair you with \`hermes pair\`.`;
}
