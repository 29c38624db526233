import { existsSync, statSync } from "node:fs";
import { basename, dirname, relative } from "node:path";
import { loadConfig } from "../config/load.js";
import { CHARS_PER_TOKEN, indexLength } from "../skills/index-text.js";
import { loadSkills } from "../skills/load.js";
import type { SkillSet } from "../skills/types.js";

const DEFAULT_INDEX_MAX_TOKENS = 300;

/** `hermes skills [list | check PATH] [--json]`: read from disk, no daemon needed. */
export async function skillsCommand(configPath: string, rest: string[], json: boolean): Promise<number> {
  const [action = "list", path] = rest;
  if (action === "list") {
    const { skills } = loadConfig(configPath).config;
    const set = await loadSkills(skills.dirs, skills.index_max_tokens);
    write(
      set,
      skills.index_max_tokens,
      json,
      skills.dirs.filter((d) => !existsSync(d)),
    );
    return 0;
  }
  if (action === "check" && path) {
    const maxTokens = indexCapOf(configPath);
    const folder = skillFolderOf(path);
    if ("problem" in folder) {
      process.stderr.write(`hermes: ${folder.problem}\n`);
      return 1;
    }
    const set = await loadSkills([folder.dir], maxTokens);
    write(set, maxTokens, json, []);
    if (set.skills.length === 0 && set.problems.length === 0) {
      process.stderr.write(`hermes: no SKILL.md in ${path} or in its sub-folders\n`);
    }
    return set.skills.length > 0 && set.problems.every((p) => !p.skipped) ? 0 : 1;
  }
  process.stderr.write("hermes: usage: hermes skills [list | check PATH] [--json]\n");
  return 2;
}

/** The folder `check` reads: the path itself, or the folder of a SKILL.md given by its file. */
function skillFolderOf(path: string): { dir: string } | { problem: string } {
  try {
    if (!statSync(path).isFile()) return { dir: path };
  } catch {
    return existsSync(path) ? { dir: path } : { problem: `${path} does not exist` };
  }
  return basename(path) === "SKILL.md"
    ? { dir: dirname(path) }
    : { problem: `${path} is a file: give a skill's folder (the one holding its SKILL.md) or a folder of skills` };
}

/** The configured cap when there is a readable config; the default otherwise (`check` works on any folder). */
function indexCapOf(configPath: string): number {
  try {
    return loadConfig(configPath).config.skills.index_max_tokens;
  } catch {
    return DEFAULT_INDEX_MAX_TOKENS;
  }
}

function write(set: SkillSet, maxTokens: number, json: boolean, missing: string[]): void {
  const indexTokens = Math.ceil(indexLength(set.index.text) / CHARS_PER_TOKEN);
  if (json) {
    const skills = set.skills.map((s) => ({
      name: s.name,
      description: s.description,
      dir: s.dir,
      index_tokens: set.index.tokens.get(s.name) ?? 0,
      user_invocable: s.userInvocable,
      in_index: set.index.tokens.has(s.name),
      ...(s.license !== undefined && { license: s.license }),
      ...(s.compatibility !== undefined && { compatibility: s.compatibility }),
      ...(s.metadata !== undefined && { metadata: s.metadata }),
      ...(s.allowedTools !== undefined && { allowed_tools: s.allowedTools }),
    }));
    const index = { tokens: indexTokens, max_tokens: maxTokens, text: set.index.text };
    process.stdout.write(`${JSON.stringify({ skills, problems: set.problems, index, missing_dirs: missing }, null, 2)}\n`);
    return;
  }
  process.stdout.write(`${lines(set, maxTokens, indexTokens, missing).join("\n")}\n`);
}

function lines(set: SkillSet, maxTokens: number, indexTokens: number, missing: string[]): string[] {
  const width = Math.max(4, ...set.skills.map((s) => s.name.length));
  const out = set.skills.map((s) => {
    const tokens = set.index.tokens.get(s.name);
    const cost = tokens === undefined ? "  - " : String(tokens).padStart(4);
    const oneLine = s.description.replace(/\s+/g, " ");
    return `${s.name.padEnd(width)} ${cost}  ${oneLine.length > 70 ? `${oneLine.slice(0, 69)}…` : oneLine}`;
  });
  if (out.length) out.unshift(`${"name".padEnd(width)} tok.  description`);
  out.push(`${set.skills.length} skill(s); the index costs ~${indexTokens} of at most ${maxTokens} tokens`);
  for (const dir of missing) out.push(`note: ${dir} does not exist`);
  for (const p of set.problems) out.push(`${p.skipped ? "skipped" : "note"}: ${relative(process.cwd(), p.file) || p.file}: ${p.problem}`);
  return out;
}
