import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTempDir, runCli, writeConfig } from "../helpers/hermes.js";
import { writeSkill } from "../skills/fixture.js";

describe("hermes skills", () => {
  let dir: ReturnType<typeof createTempDir>;
  beforeEach(() => {
    dir = createTempDir();
  });
  afterEach(() => dir.cleanup());

  it("check names each problem with its file and fails; a clean folder passes", async () => {
    const skills = join(dir.path, "skills");
    writeSkill(skills, "good-one", { front: "tags: [x]\n" });
    writeSkill(skills, "bad-one", { front: "name: other-name\n" });
    const bad = await runCli(["skills", "check", skills, "--config", join(dir.path, "none.yaml")]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain("skipped: ");
    expect(bad.stdout).toContain("bad-one/SKILL.md: 'name' 'other-name' differs from its folder's name 'bad-one'");
    expect(bad.stdout).toContain("note: ");
    expect(bad.stdout).toContain("good-one/SKILL.md: unknown key 'tags' kept but not used");
    const good = await runCli(["skills", "check", join(skills, "good-one"), "--json", "--config", join(dir.path, "none.yaml")]);
    expect(good.code).toBe(0);
    const report = JSON.parse(good.stdout);
    expect(report.skills).toEqual([
      expect.objectContaining({ name: "good-one", index_tokens: expect.any(Number), in_index: true, user_invocable: true }),
    ]);
    expect(report.index.max_tokens).toBe(300);
    expect(report.index.tokens).toBeLessThanOrEqual(300);
  });

  it("check takes a skill's SKILL.md for its folder, and says why when a path holds no skill", async () => {
    const skills = join(dir.path, "skills");
    writeSkill(skills, "good-one", {});
    const none = join(dir.path, "none.yaml");
    const byFile = await runCli(["skills", "check", join(skills, "good-one", "SKILL.md"), "--json", "--config", none]);
    expect(byFile.code).toBe(0);
    expect(JSON.parse(byFile.stdout).skills).toEqual([expect.objectContaining({ name: "good-one" })]);
    writeFileSync(join(dir.path, "notes.txt"), "not a skill");
    const other = await runCli(["skills", "check", join(dir.path, "notes.txt"), "--config", none]);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("notes.txt is a file: give a skill's folder");
    mkdirSync(join(dir.path, "empty"));
    const empty = await runCli(["skills", "check", join(dir.path, "empty"), "--config", none]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain(`no SKILL.md in ${join(dir.path, "empty")} or in its sub-folders`);
  });

  it("list reads skills.dirs from the config, with each skill's cost in the index", async () => {
    writeSkill(join(dir.path, "skills"), "water-plants", { description: "Water the plants on Sundays." });
    writeSkill(join(dir.path, "skills"), "brew-coffee", { description: "Brew coffee at seven." });
    const config = writeConfig(dir.path, { skills: { dirs: ["./skills", "./missing"], index_max_tokens: 100 } });
    const listed = await runCli(["skills", "list", "--config", config]);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.split("\n");
    expect(lines[1]).toMatch(/^brew-coffee\s+10\s+Brew coffee at seven\.$/);
    expect(lines[2]).toMatch(/^water-plants\s+12\s+Water the plants on Sundays\.$/);
    expect(listed.stdout).toContain("2 skill(s); the index costs ~");
    expect(listed.stdout).toContain("of at most 100 tokens");
    expect(listed.stdout).toContain(`note: ${join(dir.path, "missing")} does not exist`);
    const usage = await runCli(["skills", "check", "--config", config]);
    expect(usage.code).toBe(2);
  });
});
