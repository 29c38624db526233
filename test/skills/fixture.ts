/** Small skill folders written for the tests (the public skills are tried by hand, never copied here). */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export interface SkillFixture {
  description?: string;
  body?: string;
  /** More front matter lines, as written (`license: MIT`). */
  front?: string;
  /** Other files of the folder, by relative path. */
  files?: Record<string, string>;
  /** The whole SKILL.md, instead of one made from the fields above. */
  raw?: string;
}

/** Writes `<root>/<folder>/SKILL.md` (and its files); the front matter's name is the folder's unless `front` sets another. */
export function writeSkill(root: string, folder: string, skill: SkillFixture = {}): string {
  const dir = join(root, folder);
  mkdirSync(dir, { recursive: true });
  const description = skill.description ?? `Does the ${folder} routine. Use when the owner asks for ${folder}.`;
  const name = skill.front?.match(/^name:/m) ? "" : `name: ${folder}\n`;
  const text =
    skill.raw ??
    `---\n${name}description: ${description}\n${skill.front ?? ""}---\n\n${skill.body ?? `# ${folder}\n\nStep one of ${folder}.`}\n`;
  writeFileSync(join(dir, "SKILL.md"), text);
  for (const [path, content] of Object.entries(skill.files ?? {})) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/** `count` valid skills named `skill-001`…, each with a description of about `descriptionChars`. */
export function writeManySkills(root: string, count: number, descriptionChars = 200): string[] {
  return Array.from({ length: count }, (_, i) => {
    const folder = `skill-${String(i + 1).padStart(3, "0")}`;
    const words = `Handles the ${folder} chores for the household, step by step, and says when it is done. `;
    writeSkill(root, folder, {
      description: words
        .repeat(Math.ceil(descriptionChars / words.length))
        .slice(0, descriptionChars)
        .trim(),
    });
    return folder;
  });
}
