/**
 * The chat command menu: Telegram's `setMyCommands` and Discord's application (slash) commands list
 * these. Skills add their user-invocable commands through `addMenuCommands`; the built-ins come first
 * and the list is capped under each platform's limit (both take at most 100).
 */
export interface MenuCommand {
  /** Lower-case letters, digits and `_`, 1–32 characters (what both platforms accept). */
  name: string;
  description: string;
}

export const BUILTIN_COMMANDS: readonly MenuCommand[] = [
  { name: "new", description: "Start a fresh conversation" },
  { name: "stop", description: "Stop what I am doing" },
  { name: "status", description: "Is everything working?" },
  { name: "compact", description: "Summarise our conversation so far" },
  { name: "whoami", description: "Your id here, and whether you may use me" },
  { name: "help", description: "What I can do" },
];

/** The commands a connector answers itself (the menu's and /start): a skill of the same name is not offered as one. */
export const RESERVED_COMMANDS: readonly string[] = [...BUILTIN_COMMANDS.map((c) => c.name), "start"];

/** Both platforms refuse a menu of more than 100 commands; kept under it. */
export const MAX_MENU_COMMANDS = 100;
const NAME = /^[a-z0-9_]{1,32}$/;

type Provider = () => MenuCommand[];
const providers: Provider[] = [];

/**
 * The hook for skills: a provider is asked for its commands each time a menu is built (at a
 * connector's start). Names that clash with a built-in or are not valid on both platforms are dropped.
 */
export function addMenuCommands(provider: Provider): () => void {
  providers.push(provider);
  return () => {
    const at = providers.indexOf(provider);
    if (at >= 0) providers.splice(at, 1);
  };
}

/** The menu: the built-ins, then the skills' commands, each name once, descriptions cut to `maxDescription`. */
export function menuCommands(maxDescription: number): MenuCommand[] {
  const seen = new Set<string>();
  const out: MenuCommand[] = [];
  for (const c of [...BUILTIN_COMMANDS, ...providers.flatMap((p) => safely(p))]) {
    if (!NAME.test(c.name) || seen.has(c.name) || out.length >= MAX_MENU_COMMANDS) continue;
    seen.add(c.name);
    out.push({ name: c.name, description: (c.description.trim() || c.name).slice(0, maxDescription) });
  }
  return out;
}

/** A provider that throws costs its own commands, not the menu. */
function safely(provider: Provider): MenuCommand[] {
  try {
    return provider();
  } catch {
    return [];
  }
}

/** What `/whoami` answers: the id, whether this user may use hermes, and nothing else. */
export function whoamiText(platform: string, id: string | number | undefined, allowed: boolean): string {
  if (id === undefined) return "I cannot see who you are here.";
  return allowed
    ? `Your ${platform} id is ${id}. You are allowed to use this assistant.`
    : `Your ${platform} id is ${id}. You are not allowed to use this assistant; the owner can pair you with \`hermes pair\`.`;
}
