/**
 * Skills: folders in the agentskills.io format (a SKILL.md with YAML front matter and a Markdown body,
 * other files beside it). Rules:
 * - A skill adds knowledge, never a way to run code: its scripts run only through `shell`, gated as always,
 *   and `allowed-tools` is kept as data but grants nothing.
 * - Loading never throws for a bad skill: it becomes a `SkillProblem` naming the file, and is skipped.
 * - The index is a pure function of the valid skills and the cap: the same skills give the same bytes.
 */

/** One valid skill. */
export interface Skill {
  /** `a-z0-9-`, ≤ 64 characters, the folder's name. */
  name: string;
  /** ≤ 1024 characters. */
  description: string;
  /** The folder that holds SKILL.md (absolute). */
  dir: string;
  /** The path of SKILL.md. */
  file: string;
  /** The Markdown after the front matter. */
  body: string;
  /** Optional keys of the standard, kept as written. */
  license?: string;
  compatibility?: string;
  metadata?: Record<string, string>;
  /** Kept for `hermes skills list`; grants no tool and skips no confirmation. */
  allowedTools?: string;
  /** Front matter keys outside the standard (other agents' extensions), kept as written. */
  extra: Record<string, unknown>;
  /** False when the front matter says `user-invocable: false`: not offered as a chat command. */
  userInvocable: boolean;
  /** True when the front matter says `disable-model-invocation: true`: left out of the index. */
  hiddenFromModel: boolean;
}

/** A SKILL.md that could not be used, or a note about one that could. */
export interface SkillProblem {
  file: string;
  problem: string;
  /** True when the skill was skipped; false for a note (an unknown key, a cut description). */
  skipped: boolean;
}

/** The index as it goes into the system prompt, and what each skill costs in it. */
export interface SkillIndex {
  /** Empty when there is nothing to list. */
  text: string;
  /** Estimated tokens of each skill's line in `text` (0 when it did not fit). */
  tokens: Map<string, number>;
}

/** What the daemon loaded from `skills.dirs`: valid skills sorted by name, the problems, and the index. */
export interface SkillSet {
  skills: Skill[];
  problems: SkillProblem[];
  index: SkillIndex;
  /** A skill by name; `_` is read as `-` (Telegram's command menu cannot hold `-`). */
  find(name: string): Skill | undefined;
}
