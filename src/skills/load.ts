import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { buildIndex } from "./index-text.js";
import { parseSkill } from "./parse.js";
import type { Skill, SkillProblem, SkillSet } from "./types.js";

/** A SKILL.md bigger than this is refused: a skill is instructions, not a data file (the largest public one is ~75 kB). */
const MAX_SKILL_BYTES = 1_000_000;

/**
 * Loads every skill under `dirs` (each sub-folder with a SKILL.md; a folder that is itself a skill counts too).
 * The files are read synchronously: a few small local files, read on the way to READY, where each
 * asynchronous call would wait for a thread of libuv's pool and a turn of the loop (~15 ms for three skills).
 */
export async function loadSkills(dirs: readonly string[], indexMaxTokens: number): Promise<SkillSet> {
  const skills: Skill[] = [];
  const problems: SkillProblem[] = [];
  const seen = new Map<string, string>();
  for (const dir of dirs) {
    for (const folder of skillFolders(resolve(dir))) {
      const result = readSkill(folder);
      if ("problem" in result) {
        problems.push(result.problem);
        continue;
      }
      problems.push(...result.notes);
      const first = seen.get(result.skill.name);
      if (first) {
        problems.push({
          file: result.skill.file,
          problem: `a skill named '${result.skill.name}' is already loaded from ${first}`,
          skipped: true,
        });
        continue;
      }
      seen.set(result.skill.name, result.skill.file);
      skills.push(result.skill);
    }
  }
  return skillSet(skills, problems, indexMaxTokens);
}

/** The set over already-read skills: sorted by code point (not locale), so the index is the same bytes everywhere. */
export function skillSet(skills: Skill[], problems: SkillProblem[], indexMaxTokens: number): SkillSet {
  const sorted = [...skills].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const byName = new Map(sorted.map((s) => [s.name, s]));
  return {
    skills: sorted,
    problems,
    index: buildIndex(
      sorted.filter((s) => !s.hiddenFromModel),
      indexMaxTokens,
    ),
    find: (name) => byName.get(name.replaceAll("_", "-")),
  };
}

/** `dir` itself when it holds a SKILL.md, else its sub-folders that do, by name. A missing folder holds none. */
function skillFolders(dir: string): string[] {
  if (isFile(join(dir, "SKILL.md"))) return [dir];
  return entriesOf(dir)
    .filter((e) => e.isDirectory() || e.isSymbolicLink())
    .map((e) => join(dir, e.name))
    .filter((f) => isFile(join(f, "SKILL.md")))
    .sort();
}

function entriesOf(dir: string) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

function readSkill(folder: string) {
  const file = join(folder, "SKILL.md");
  const fail = (problem: string) => ({ problem: { file, problem, skipped: true } });
  try {
    const info = statSync(file);
    if (info.size > MAX_SKILL_BYTES) return fail(`SKILL.md is ${info.size} bytes; at most ${MAX_SKILL_BYTES}`);
    const bytes = readFileSync(file);
    if (bytes.includes(0)) return fail("SKILL.md is not text");
    return parseSkill(bytes.toString("utf8"), file, realpathSync(folder), basename(folder));
  } catch (err) {
    return fail(`could not be read: ${(err as Error).message}`);
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
