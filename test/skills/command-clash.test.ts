import { afterEach, describe, expect, it } from "vitest";
import { skillMenu, skillRequest } from "../../connectors/chat/commands.js";
import type { Core } from "../../src/connector.js";
import { loadSkills } from "../../src/skills/load.js";
import { createTempDir } from "../helpers/hermes.js";
import { writeSkill } from "./fixture.js";

describe("skill commands that clash with typed built-ins", () => {
  let dir: ReturnType<typeof createTempDir>;
  afterEach(() => dir.cleanup());

  it("does not offer in the menu a skill whose command a built-in (/approve, /deny) answers instead", async () => {
    dir = createTempDir();
    writeSkill(dir.path, "approve", { description: "Approve an expense report. Use when the owner sends one." });
    writeSkill(dir.path, "deny", { description: "Decline an invitation politely." });
    const set = await loadSkills([dir.path], 300);
    const core = { skills: () => set } as unknown as Core;
    // Typed, the built-in command answers: the skill never runs from the chat.
    expect(skillRequest(core, "/approve the report from March")).toBeUndefined();
    expect(skillRequest(core, "/deny the party")).toBeUndefined();
    // So the menus must not list them as the skills' commands.
    for (const platform of ["telegram", "discord"] as const) {
      const names = skillMenu(core, platform).map((c) => c.name);
      expect(names).not.toContain("approve");
      expect(names).not.toContain("deny");
    }
  });
});
