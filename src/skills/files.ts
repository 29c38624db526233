import { createTool as createFileTool } from "../../tools/files.js";
import { ToolError } from "../errors.js";
import type { ToolContext, ToolDeps } from "../tools/types.js";

/**
 * A file inside a skill's folder, read by the file tools' own `read_file` (or `list_files` for a folder)
 * rooted there: the same jail (no absolute paths, no `..`, no link that leads out, no race) and the same
 * size cap, from one place, so a fix to the file tools is a fix here.
 */
export async function readSkillFile(dir: string, path: string, deps: ToolDeps, ctx: ToolContext): Promise<string> {
  const config = { ...deps.config, tools: { ...deps.config.tools, files: { ...deps.config.tools.files, root: dir } } };
  const fileDeps = { ...deps, config };
  try {
    return await createFileTool("read_file", fileDeps).run({ path }, ctx);
  } catch (err) {
    if (err instanceof ToolError && /folder; use list_files/.test(err.message))
      return createFileTool("list_files", fileDeps).run({ path }, ctx);
    if (err instanceof ToolError) throw new ToolError(err.message.replaceAll("the files folder", "the skill's folder"));
    throw err;
  }
}
