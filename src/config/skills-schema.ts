import { z } from "./zod.js";

/** `skills:`: folders of agentskills.io skills, and the most the index may cost in the system prompt. */
export const skillsSchema = () =>
  z
    .strictObject({
      /** Each sub-folder holding a SKILL.md is a skill. A folder that does not exist holds none. */
      dirs: z.array(z.string().min(1)).default(["./data/skills"]),
      /** The index in the system prompt never exceeds this (≈ 4 characters a token). */
      index_max_tokens: z.int().min(0).max(20_000).default(300),
    })
    .prefault({});
