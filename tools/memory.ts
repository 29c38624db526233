import { z } from "zod";
import type { ToolName } from "../src/config/schema.js";
import { ToolError } from "../src/errors.js";
import { defineTool } from "../src/tools/define.js";
import type { ToolDeps } from "../src/tools/types.js";

const input = z.discriminatedUnion("action", [
  z.strictObject({ action: z.literal("remember"), fact: z.string().min(3).max(200) }),
  z.strictObject({ action: z.literal("list") }),
  z.strictObject({ action: z.literal("forget"), id: z.int().positive() }),
]);

/** Lasting facts about the owner, shown to the model at the start of every run. */
export function createTool(_name: ToolName, deps: ToolDeps) {
  const memory = deps.store.memory;
  const maxFacts = deps.config.tools.memory.max_facts;
  return defineTool({
    name: "memory",
    description:
      'Remember a short lasting fact about the owner, list what you remember, or forget a fact by id. Use when the owner tells you something worth keeping across conversations. Example: {"action": "remember", "fact": "prefers metric units"}.',
    input,
    run: (args) => {
      switch (args.action) {
        case "remember": {
          if (memory.count() >= maxFacts) throw new ToolError(`memory is full (${maxFacts} facts); forget one first`);
          const m = memory.remember(args.fact.trim());
          return `Remembered #${m.id}: ${m.fact}`;
        }
        case "list": {
          const all = memory.list();
          return all.length ? all.map((m) => `#${m.id}: ${m.fact}`).join("\n") : "Nothing remembered yet.";
        }
        case "forget":
          if (!memory.forget(args.id)) throw new ToolError(`there is no fact #${args.id}`);
          return `Forgot #${args.id}.`;
      }
    },
  });
}
