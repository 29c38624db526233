import { latinLengthAt } from "../model/tokens.js";
import type { Skill, SkillIndex } from "./types.js";

/**
 * The cap counts ≈ 4 characters a token, as SPEC §19 states it: characters of Latin text, so descriptions in
 * Chinese (over a token a character) are cut to what the cap's tokens hold, not to as many characters.
 */
export const CHARS_PER_TOKEN = 4;

/** A text's length against the cap: its own for Latin text, what Latin text of the same tokens would take for another script. */
export const indexLength = (text: string) => latinLengthAt(text, CHARS_PER_TOKEN);
/** The index joins the system prompt after a blank line; the cap covers that too. */
const JOINER = 2;
const HEADER = "Skills (before such a task, read one with the skill tool):";

/**
 * The skill index for the system prompt, never longer than `maxTokens` × 4 characters with the blank line
 * before it: every description in full when that fits; else all cut to the longest length that fits (the
 * longest are cut first); else names alone, as many as fit, and a count of the rest. `skills` come sorted;
 * the same input gives the same bytes.
 */
export function buildIndex(skills: readonly Skill[], maxTokens: number): SkillIndex {
  const cap = maxTokens * CHARS_PER_TOKEN - JOINER;
  const entries = skills.map((s) => ({ name: s.name, description: s.description.replace(/\s+/g, " ").trim() }));
  const longest = Math.max(0, ...entries.map((e) => e.description.length));
  const render = (limit: number) => entries.map((e) => line(e.name, e.description, limit));
  const fits = (lines: string[]) => size(lines) <= cap;
  if (entries.length === 0 || !fits([])) return { text: "", tokens: new Map() };
  if (fits(render(longest))) return indexOf(entries, render(longest));
  let [low, high] = [0, longest];
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(render(mid))) low = mid;
    else high = mid - 1;
  }
  if (fits(render(low))) return indexOf(entries, render(low));
  return namesOnly(entries, cap);
}

function line(name: string, description: string, limit: number): string {
  if (limit < 8) return `- ${name}`;
  return `- ${name}: ${shorten(description, limit)}`;
}

/** Cut to `limit` characters at a word's end when one is near, marked with an ellipsis. */
function shorten(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const cut = text.slice(0, limit - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > limit - 16 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function size(lines: string[]): number {
  return indexLength([HEADER, ...lines].join("\n"));
}

function indexOf(entries: { name: string }[], lines: string[]): SkillIndex {
  const tokens = new Map(entries.map((e, i) => [e.name, Math.ceil((indexLength(lines[i] ?? "") + 1) / CHARS_PER_TOKEN)]));
  return { text: [HEADER, ...lines].join("\n"), tokens };
}

/** Too many skills for even their names: the first ones that fit, and how many more can be asked for by name. */
function namesOnly(entries: { name: string }[], cap: number): SkillIndex {
  const lines: string[] = [];
  for (let i = 0; i < entries.length; i++) {
    const next = [...lines, `- ${entries[i]?.name}`];
    const rest = entries.length - next.length;
    if (size(rest ? [...next, more(rest)] : next) > cap) break;
    lines.push(`- ${entries[i]?.name}`);
  }
  const rest = entries.length - lines.length;
  if (rest && size([...lines, more(rest)]) > cap) return { text: "", tokens: new Map() };
  const shown = indexOf(entries.slice(0, lines.length), lines);
  return rest ? { text: `${shown.text}\n${more(rest)}`, tokens: shown.tokens } : shown;
}

function more(count: number): string {
  return `- and ${count} more, by name`;
}
