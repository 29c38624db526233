import { existsSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel, RecordedRequest, Turn } from "../fakes/model-server.js";
import { useHermes, useModel, useTempDir } from "../helpers/fixture.js";
import { baseSettings, writeConfig } from "../helpers/hermes.js";
import { writeSkill } from "./fixture.js";

const INDEX_HEADER = "Skills (before such a task, read one with the skill tool):";
const system = (req: RecordedRequest | undefined) => req?.messages.find((m) => m.role === "system")?.content ?? "";
const toolNames = (req: RecordedRequest | undefined) => req?.tools.map((t) => t.function?.name) ?? [];
const toolResults = (req: RecordedRequest | undefined) => req?.messages.filter((m) => m.role === "tool").map((m) => m.content) ?? [];
const skillCall = (args: Record<string, unknown>) => ({ name: "skill", arguments: args });

describe("skills in the daemon", () => {
  let model: FakeModel;
  let dir: string;
  const settings = (extra: Record<string, unknown> = {}) => ({
    ...baseSettings(model.url),
    tools: { enabled: ["clock", "skill", "shell"] },
    skills: { dirs: ["./skills"] },
    ...extra,
  });
  const start = (extra: Record<string, unknown> = {}) => useHermes(settings(extra), { dir });

  beforeEach(async () => {
    model = await useModel();
    dir = useTempDir();
  });

  it("puts the index in the system prompt, the same bytes every turn; `skill` reads the body and files and refuses escapes", async () => {
    const skills = join(dir, "skills");
    writeSkill(skills, "plan-trip", {
      description: "Plan a trip by train. Use when the owner wants to travel.",
      body: "# Plan a trip\n\nRead reference.md first.",
      files: { "reference.md": "Trains before planes.", "notes/extra.md": "Pack light." },
    });
    writeSkill(skills, "water-plants", { description: "Water the plants on Sundays." });
    writeFileSync(join(dir, "secret.txt"), "the owner's secret");
    symlinkSync(join(dir, "secret.txt"), join(skills, "plan-trip", "leak.txt"));
    model.script({
      toolCalls: [
        skillCall({ name: "plan-trip" }),
        skillCall({ name: "plan_trip", file: "reference.md" }),
        skillCall({ name: "plan-trip", file: "notes" }),
        skillCall({ name: "plan-trip", file: "../water-plants/SKILL.md" }),
        skillCall({ name: "plan-trip", file: join(dir, "secret.txt") }),
        skillCall({ name: "plan-trip", file: "leak.txt" }),
        skillCall({ name: "fly-away" }),
      ],
    });
    const h = await start();
    expect((await h.ask("plan my trip")).code).toBe(0);
    expect((await h.ask("and again")).code).toBe(0);
    const [first, afterTools, second] = model.requests;
    expect(system(first)).toContain(
      `${INDEX_HEADER}\n- plan-trip: Plan a trip by train. Use when the owner wants to travel.\n- water-plants: Water the plants on Sundays.`,
    );
    expect(system(second)).toBe(system(first));
    expect(toolNames(first)).toContain("skill");
    const results = toolResults(afterTools);
    expect(results.slice(0, 3)).toEqual(["# Plan a trip\n\nRead reference.md first.", "Trains before planes.", "extra.md (11 bytes)"]);
    // Refused by the file tools' jail, whatever words it uses.
    expect(results[3]).toMatch(/'\.\.\/water-plants\/SKILL\.md'.*(\.\.|outside)/);
    expect(results[4]).toMatch(/absolute|outside/);
    expect(results[5]).toMatch(/'leak\.txt'.*(outside|link)/);
    expect(results.slice(3, 6).join("\n")).not.toContain("Step one of water-plants");
    expect(results[6]).toMatch(/no skill named 'fly-away'; the skills are: plan-trip, water-plants/);
    expect(results.join("\n")).not.toContain("the owner's secret");
  });

  it("adds no way to run code: a skill's script is only text to `skill`, and runs only through `shell`, which asks", async () => {
    const marker = join(dir, "script-ran");
    writeSkill(join(dir, "skills"), "clean-up", {
      front: "allowed-tools: shell Bash(*)\n",
      body: "Run scripts/wipe.sh with the shell tool.",
      files: { "scripts/wipe.sh": `#!/bin/sh\ntouch ${marker}\n` },
    });
    const script = join(dir, "skills", "clean-up", "scripts", "wipe.sh");
    model.script(
      { toolCalls: [skillCall({ name: "clean-up" }), skillCall({ name: "clean-up", file: "scripts/wipe.sh" })] },
      { toolCalls: [{ name: "shell", arguments: { command: `sh ${script}` } }] },
    );
    model.respond((req): Turn => ({ text: `Result: ${toolResults(req).at(-1)}` }));
    const h = await start();
    const denied = await h.ask("clean up", "--no");
    expect(toolResults(model.requests[1])[1]).toBe(`#!/bin/sh\ntouch ${marker}\n`);
    expect(denied.stdout).toContain("the user denied this call; it did not run");
    expect(existsSync(marker)).toBe(false);
    model.script({ toolCalls: [{ name: "shell", arguments: { command: `sh ${script}` } }] });
    const approved = await h.ask("clean up, really", "--yes");
    expect(approved.stdout).toContain("exit code 0");
    expect(existsSync(marker)).toBe(true);
  });

  it("offers no skill tool and no index when there are no skills, or when tools.enabled leaves `skill` out", async () => {
    const h = await start();
    await h.ask("hello");
    expect(toolNames(model.requests[0])).toEqual(["clock", "shell"]);
    expect(system(model.requests[0])).not.toContain(INDEX_HEADER);
    await h.stop();
    writeSkill(join(dir, "skills"), "water-plants");
    await (await start({ tools: { enabled: ["clock"] } })).ask("hello");
    expect(toolNames(model.requests[1])).toEqual(["clock"]);
    expect(system(model.requests[1])).toBe(system(model.requests[0]));
  });

  it("picks up changed skills on reload: the prompt changes once; a bad skill is skipped with a warning naming its file", async () => {
    const skills = join(dir, "skills");
    writeSkill(skills, "water-plants");
    const h = await start();
    await h.ask("one");
    writeSkill(skills, "brew-coffee", { description: "Brew coffee at seven." });
    writeSkill(skills, "Broken", { front: "name: Broken\n" });
    writeConfig(dir, settings());
    h.process.kill("SIGHUP");
    const warning = await h.waitForLog((l) => l.msg === "skill skipped");
    expect(warning).toMatchObject({ file: join(skills, "Broken", "SKILL.md"), problem: expect.stringContaining("'Broken' may hold only") });
    await h.waitForLog((l) => l.msg === "config reloaded");
    await h.ask("two");
    await h.ask("three");
    const prompts = model.requests.map(system);
    expect(prompts[0]).not.toContain("brew-coffee");
    expect(prompts[1]).toContain("- brew-coffee: Brew coffee at seven.\n- water-plants:");
    expect(prompts[2]).toBe(prompts[1]);
    expect(prompts[1]?.startsWith(prompts[0]?.slice(0, prompts[0].indexOf(INDEX_HEADER)) ?? "?")).toBe(true);
  });
});
