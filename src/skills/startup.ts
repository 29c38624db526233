import { existsSync } from "node:fs";
import type { Logger } from "pino";
import type { Config } from "../config/schema.js";
import type { SkillSet } from "./types.js";

/**
 * The daemon's skills: loaded (with the YAML reader behind them) only when one of `skills.dirs` exists.
 * A bad skill is logged with its file and problem and skipped; nothing here stops the daemon.
 */
export async function startSkills(config: Config, log: Logger): Promise<SkillSet | undefined> {
  const { dirs, index_max_tokens: maxTokens } = config.skills;
  const missing = dirs.filter((dir) => !existsSync(dir));
  // Said once at start, so a mistyped folder is not silently no skills (the default one may well not exist).
  if (missing.length) log.info({ dirs: missing }, "skills folders that do not exist (skills.dirs)");
  if (missing.length === dirs.length) return undefined;
  try {
    const set = await (await import("./load.js")).loadSkills(dirs, maxTokens);
    for (const p of set.problems) {
      if (p.skipped) log.warn({ file: p.file, problem: p.problem }, "skill skipped");
      else log.debug({ file: p.file, problem: p.problem }, "skill note");
    }
    if (set.skills.length) log.info({ skills: set.skills.length, indexChars: set.index.text.length }, "skills loaded");
    return set;
  } catch (err) {
    log.error({ err }, "skills could not be loaded; running without them");
    return undefined;
  }
}

/** The index for the system prompt when the model can read skills: empty otherwise. */
export function skillIndexText(set: SkillSet | undefined, toolEnabled: boolean): string {
  return toolEnabled ? (set?.index.text ?? "") : "";
}
