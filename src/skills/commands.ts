import { truncateResult } from "../text.js";
import type { Skill, SkillSet } from "./types.js";

/** As much of a body as the `skill` tool returns. */
const MAX_BODY_CHARS = 12_000;

/** Telegram allows 100 bot commands (1–32 characters of a-z, 0-9, _); Discord 100 application commands (≤ 32 characters). */
const PLATFORM = {
  telegram: { max: 100, nameLength: 32, descriptionLength: 256 },
  discord: { max: 100, nameLength: 32, descriptionLength: 100 },
} as const;

export type MenuPlatform = keyof typeof PLATFORM;

export interface SkillCommand {
  /** As the platform lists it: `_` for `-` on Telegram. */
  name: string;
  description: string;
}

/**
 * The menu entries for the user-invocable skills, after the connector's own `reserved` commands: names the
 * platform cannot hold or that a built-in command takes are left out (they still work typed), and the list
 * stops under the platform's limit.
 */
export function skillCommands(set: SkillSet | undefined, platform: MenuPlatform, reserved: readonly string[]): SkillCommand[] {
  const limits = PLATFORM[platform];
  const taken = new Set(reserved);
  const room = Math.max(0, limits.max - reserved.length);
  const menuName = (s: Skill) => (platform === "telegram" ? s.name.replaceAll("-", "_") : s.name);
  return (set?.skills ?? [])
    .filter((s) => s.userInvocable && s.name.length <= limits.nameLength && !taken.has(menuName(s)))
    .slice(0, room)
    .map((s) => ({ name: menuName(s), description: cut(s.description.replace(/\s+/g, " "), limits.descriptionLength) }));
}

/** `/<skill-name> text` (or `/<skill_name>@bot text`): the skill and the text, when a user-invocable skill has that name. */
export function matchSkillCommand(
  set: SkillSet | undefined,
  message: string,
  reserved: readonly string[],
): { skill: Skill; text: string } | undefined {
  const match = message.match(/^\/([a-z0-9_-]{1,64})(?:@\w+)?(?:\s+([\s\S]*))?$/);
  if (!match || reserved.includes(match[1] as string)) return undefined;
  const skill = set?.find(match[1] as string);
  if (!skill?.userInvocable) return undefined;
  return { skill, text: (match?.[2] ?? "").trim() };
}

/** The message the model receives: the skill's instructions loaded for this turn, then what the user asked. */
export function withSkill(skill: Skill, text: string): string {
  const request = text || "(no further text: follow the skill)";
  return `Use the skill "${skill.name}" for this request. Its instructions:\n<skill name="${skill.name}">\n${truncateResult(skill.body, MAX_BODY_CHARS)}\n</skill>\n\n${request}`;
}

/**
 * Whether `text` (a user message, perhaps with a group's "Name: " in front) is a `/<skill>` command's
 * message for the skill `name`, as `withSkill` writes it.
 */
export function invokesSkill(text: string, name: string): boolean {
  const head = `Use the skill "${name}" for this request. Its instructions:\n`;
  const at = text.indexOf(head);
  return at >= 0 && !text.slice(0, at).includes("\n");
}

function cut(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1).trimEnd()}…`;
}
