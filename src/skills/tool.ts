import type { ToolName } from "../config/schema.js";
import { z } from "../config/zod.js";
import { ToolError } from "../errors.js";
import { defineTool } from "../tools/define.js";
import type { AnyTool, ToolContext, ToolDeps } from "../tools/types.js";
import { invokesSkill } from "./commands.js";
import { readSkillFile } from "./files.js";
import type { SkillSet } from "./types.js";

/** A skill's body is instructions the model follows, so it gets more room than a tool's usual 4,000 characters (~3k tokens). */
const MAX_SKILL_CHARS = 12_000;

/** `skill`: reads a skill's instructions, or a file inside its folder. Reads only: it runs nothing. */
export function createTool(_name: ToolName, deps: ToolDeps): AnyTool {
  return defineTool({
    name: "skill",
    description: 'Read a listed skill before its task; "file" reads a file it names. Example: {"name": "plan-trip"}',
    input: z.strictObject({ name: z.string().min(1).max(64), file: z.string().min(1).max(1024).optional() }),
    readOnly: true,
    maxResultChars: MAX_SKILL_CHARS,
    run: async ({ name, file }, ctx) => {
      const skill = deps.skills?.()?.find(name);
      if (!skill || (skill.hiddenFromModel && !invokedInConversation(deps, ctx, skill.name)))
        throw new ToolError(unknownSkill(name, deps.skills?.()));
      if (file === undefined) return skill.body || "(this skill has no instructions beyond its description)";
      return readSkillFile(skill.dir, file, deps, ctx);
    },
  });
}

/**
 * A skill marked `disable-model-invocation: true` is the owner's to start: the model reads it (its files,
 * mostly: the body came with the command) only in a conversation where someone sent its `/<skill>`, in
 * this run or in the messages the session's prompt is built from. Elsewhere it does not exist for the
 * model. (An allowed user who types the command's text by hand gets the same: they could send /<skill>.)
 */
function invokedInConversation(deps: ToolDeps, ctx: ToolContext, name: string): boolean {
  const { history } = deps.store;
  const run = history.run(ctx.runId);
  if (!run) return false;
  if (run.input && invokesSkill(run.input, name)) return true;
  // The messages the model's prompt is built from (a routine goes on over many turns of many calls).
  return history.windowMessages(run.session_id).some((m) => m.role === "user" && invokesSkill(m.content, name));
}

function unknownSkill(name: string, set: SkillSet | undefined): string {
  const names = set?.skills.filter((s) => !s.hiddenFromModel).map((s) => s.name) ?? [];
  if (names.length === 0) return `no skill named '${name}': there are no skills`;
  const shown = names.slice(0, 30).join(", ");
  return `no skill named '${name}'; the skills are: ${shown}${names.length > 30 ? ", …" : ""}`;
}
