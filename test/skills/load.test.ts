import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { estimateTokens } from "../../src/model/tokens.js";
import { skillCommands } from "../../src/skills/commands.js";
import { loadSkills } from "../../src/skills/load.js";
import { createTempDir } from "../helpers/hermes.js";
import { writeManySkills, writeSkill } from "./fixture.js";

describe("loading skills", () => {
  let dir: ReturnType<typeof createTempDir>;
  afterEach(() => dir.cleanup());
  const root = () => {
    dir = createTempDir();
    return dir.path;
  };

  it("loads a valid skill with its body (no front matter) and keeps the optional keys", async () => {
    const skills = root();
    writeSkill(skills, "plan-trip", {
      front: 'license: MIT\ncompatibility: needs http_get\nmetadata:\n  author: owner\n  version: "1.2"\nallowed-tools: shell http_get\n',
      body: "# Planning a trip\n\n1. Ask where.",
    });
    const set = await loadSkills([skills], 300);
    expect(set.problems).toEqual([]);
    const skill = set.find("plan-trip");
    expect(skill).toMatchObject({
      name: "plan-trip",
      body: "# Planning a trip\n\n1. Ask where.",
      license: "MIT",
      compatibility: "needs http_get",
      metadata: { author: "owner", version: "1.2" },
      allowedTools: "shell http_get",
    });
    expect(set.find("plan_trip")).toBe(skill);
  });

  it("skips bad skills with the file and the problem, and keeps loading the good ones", async () => {
    const skills = root();
    writeSkill(skills, "good");
    writeSkill(skills, "Bad-Case", { front: "name: Bad-Case\n" });
    writeSkill(skills, "other-folder", { front: "name: not-the-folder\n" });
    writeSkill(skills, "no-description", { raw: "---\nname: no-description\n---\nbody\n" });
    writeSkill(skills, "long-description", { description: "x".repeat(1025) });
    writeSkill(skills, "no-front-matter", { raw: "# Just Markdown\n" });
    writeSkill(skills, "broken-yaml", { raw: "---\nname: broken-yaml\ndescription: [unclosed\n---\n" });
    writeSkill(skills, "double--hyphen", { front: "name: double--hyphen\n" });
    writeSkill(skills, "a".repeat(65));
    mkdirSync(join(skills, "not-a-skill"));
    writeFileSync(join(skills, "stray.md"), "not a folder");
    const set = await loadSkills([skills], 300);
    expect(set.skills.map((s) => s.name)).toEqual(["good"]);
    const problems = Object.fromEntries(set.problems.map((p) => [p.file.slice(skills.length + 1), p.problem]));
    expect(problems).toEqual({
      "Bad-Case/SKILL.md": "'name' 'Bad-Case' may hold only a-z, 0-9 and single '-' between them",
      "other-folder/SKILL.md": "'name' 'not-the-folder' differs from its folder's name 'other-folder'",
      "no-description/SKILL.md": "'description' is missing; say what the skill does and when to use it",
      "long-description/SKILL.md": "'description' is 1025 characters; at most 1024",
      "no-front-matter/SKILL.md": expect.stringContaining("no YAML front matter"),
      "broken-yaml/SKILL.md": expect.stringContaining("not valid YAML"),
      "double--hyphen/SKILL.md": "'name' 'double--hyphen' may hold only a-z, 0-9 and single '-' between them",
      [`${"a".repeat(65)}/SKILL.md`]: "'name' is 65 characters; at most 64",
    });
    expect(set.problems.every((p) => p.skipped)).toBe(true);
  });

  it("reads a name or description YAML would take for a number as the text written, and an empty optional key as not given", async () => {
    const skills = root();
    writeSkill(skills, "2048", { front: "name: 2048\nlicense:\nmetadata:\nallowed-tools:\n", description: "1.50" });
    writeSkill(skills, "yes", { front: "name: yes\n", description: "true" });
    const set = await loadSkills([skills], 300);
    expect(set.problems).toEqual([]);
    expect(set.skills.map((s) => [s.name, s.description])).toEqual([
      ["2048", "1.50"],
      ["yes", "true"],
    ]);
    expect(set.find("2048")).not.toHaveProperty("license");
    expect(set.find("2048")).not.toHaveProperty("allowedTools");
  });

  it("notes unknown keys without skipping, and the first of two same-named skills wins", async () => {
    const first = root();
    const second = join(first, "more");
    writeSkill(first, "tidy", { front: "tags: [home]\n" });
    writeSkill(second, "tidy");
    const set = await loadSkills([first, second], 300);
    expect(set.skills.map((s) => s.file)).toEqual([join(first, "tidy/SKILL.md")]);
    expect(set.problems).toEqual([
      { file: join(first, "tidy/SKILL.md"), problem: "unknown key 'tags' kept but not used", skipped: false },
      {
        file: join(second, "tidy/SKILL.md"),
        problem: `a skill named 'tidy' is already loaded from ${join(first, "tidy/SKILL.md")}`,
        skipped: true,
      },
    ]);
  });

  it("treats a missing folder as holding no skills", async () => {
    const set = await loadSkills([join(root(), "nowhere")], 300);
    expect(set.skills).toEqual([]);
    expect(set.index.text).toBe("");
  });
});

describe("the skill index", () => {
  let dir: ReturnType<typeof createTempDir>;
  afterEach(() => dir.cleanup());

  it("lists name and description sorted, in full when they fit", async () => {
    dir = createTempDir();
    writeSkill(dir.path, "water-plants", { description: "Water the plants." });
    writeSkill(dir.path, "brew-coffee", { description: "Brew\n  coffee." });
    const set = await loadSkills([dir.path], 300);
    expect(set.index.text).toBe(
      "Skills (before such a task, read one with the skill tool):\n- brew-coffee: Brew coffee.\n- water-plants: Water the plants.",
    );
  });

  it("holds descriptions in Chinese to the cap's tokens too, not to as many characters", async () => {
    dir = createTempDir();
    for (let i = 1; i <= 20; i++)
      writeSkill(dir.path, `skill-${String(i).padStart(2, "0")}`, {
        description: "每周检查家里的植物是否需要浇水，并提醒主人。".repeat(6),
      });
    for (const cap of [300, 100]) {
      const set = await loadSkills([dir.path], cap);
      // A Han character is over a token in the tokenizers owners run: the index holds no more of them than the cap has tokens.
      expect([...set.index.text.matchAll(/\p{Script=Han}/gu)].length).toBeLessThanOrEqual(cap);
      expect(estimateTokens(set.index.text)).toBeLessThanOrEqual(cap * 1.2);
      expect(set.index.text).toContain("- skill-01");
    }
  });

  it("never exceeds the cap: descriptions are shortened first, then names alone with a count of the rest", async () => {
    dir = createTempDir();
    const names = writeManySkills(dir.path, 20, 400);
    for (const cap of [300, 150, 60, 10, 0]) {
      const set = await loadSkills([dir.path], cap);
      expect(set.index.text.length).toBeLessThanOrEqual(cap * 4);
      if (cap === 300) {
        // All twenty are listed, each description cut to the same short length.
        for (const name of names) expect(set.index.text).toContain(`- ${name}: Handles the ${name}`);
        expect(set.index.text).toContain("…");
      }
      if (cap === 60) {
        const lines = set.index.text.split("\n").slice(1);
        for (const line of lines) expect(line).toMatch(/^- (skill-\d\d\d|and \d+ more, by name)$/);
        expect(lines.at(-1)).toMatch(/^- and \d+ more, by name$/);
      }
    }
    const again = await loadSkills([dir.path], 300);
    expect(again.index.text).toBe((await loadSkills([dir.path], 300)).index.text);
  });

  it("leaves skills marked disable-model-invocation out of the index but loads them", async () => {
    dir = createTempDir();
    writeSkill(dir.path, "secret-routine", { front: "disable-model-invocation: true\n" });
    writeSkill(dir.path, "open-routine");
    const set = await loadSkills([dir.path], 300);
    expect(set.index.text).not.toContain("secret-routine");
    expect(set.find("secret-routine")).toBeDefined();
  });
});

describe("skill commands for the chat menus", () => {
  let dir: ReturnType<typeof createTempDir>;
  afterEach(() => dir.cleanup());

  it("stay under the platforms' 100, after the built-in commands, with '_' for '-' on Telegram", async () => {
    dir = createTempDir();
    writeManySkills(dir.path, 120, 40);
    writeSkill(dir.path, "aa-private", { front: "user-invocable: false\n" });
    writeSkill(dir.path, "new", { description: "Shadowed by the built-in /new." });
    writeSkill(dir.path, "a-very-long-skill-name-over-thirty-two");
    const set = await loadSkills([dir.path], 300);
    const builtIn = ["start", "help", "new", "compact", "stop", "status"];
    const telegram = skillCommands(set, "telegram", builtIn);
    expect(telegram).toHaveLength(100 - builtIn.length);
    expect(telegram[0]).toEqual({ name: "skill_001", description: expect.stringContaining("skill-001") });
    expect(telegram.every((c) => /^[a-z0-9_]{1,32}$/.test(c.name))).toBe(true);
    const names = telegram.map((c) => c.name);
    for (const left of ["aa_private", "new", "a_very_long_skill_name_over_thirty_two"]) expect(names).not.toContain(left);
    const discord = skillCommands(set, "discord", ["new", "compact", "stop", "status", "help"]);
    expect(discord).toHaveLength(95);
    expect(discord[0]?.name).toBe("skill-001");
    expect(discord.every((c) => c.description.length <= 100)).toBe(true);
  });
});
