import type { ToolName } from "../src/config/schema.js";
import { z } from "../src/config/zod.js";
import { ToolError } from "../src/errors.js";
import { type Memory, senderOf } from "../src/store/memory.js";
import { defineTool } from "../src/tools/define.js";
import type { CallInfo, ToolDeps } from "../src/tools/types.js";
import { readUntrusted } from "./untrusted.js";

const input = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("remember"),
    fact: z.string().min(3).max(200),
    for: z.enum(["me", "everyone"]).default("me"),
  }),
  z.strictObject({ action: z.literal("list") }),
  z.strictObject({ action: z.literal("forget"), id: z.int().positive() }),
]);

/** Two wordings of one fact: the same words, whatever their case, spacing, Unicode form or final full stop. */
function sameFact(a: string, b: string): boolean {
  const key = (s: string) =>
    s
      .normalize("NFC")
      .toLowerCase()
      .replace(/\s+/g, " ")
      .trim()
      .replace(/[.!。]$/, "");
  return key(a) === key(b);
}

function scopeOf(m: Memory): string {
  return m.owner ? `for ${m.owner_name ?? m.owner}` : "for everyone";
}

/**
 * Lasting facts, each the asker's own or shared by everyone, shown to the model at the start of every run.
 * A fact outlives the conversation that made it, so it is where injected text would do lasting harm: saving
 * or forgetting a shared fact, and any change once the session has read text from outside, asks the owner.
 */
export function createTool(_name: ToolName, deps: ToolDeps) {
  const memory = deps.store.memory;
  const maxFacts = deps.config.tools.memory.max_facts;
  /** The fact already kept that says what `fact` says, for the person `personId` or for everyone. */
  const known = (fact: string, personId: string | undefined, forEveryone: boolean) =>
    memory.visibleTo(personId).find((m) => sameFact(m.fact, fact) && (m.owner === null || (!forEveryone && m.owner === personId)));
  const needsConfirmation = (args: z.output<typeof input>, call: CallInfo): boolean => {
    if (args.action === "list") return false;
    const shared = args.action === "remember" ? args.for === "everyone" : memory.get(args.id)?.owner === null;
    if (!shared && !readUntrusted(deps.store.history, call.runId)) return false;
    // A fact already kept changes nothing: no question for it (looked up only where one would be asked).
    return !(args.action === "remember" && known(args.fact, senderOf(deps.store.history.run(call.runId))?.id, args.for === "everyone"));
  };
  return defineTool({
    name: "memory",
    description:
      'Remember a short lasting fact, list what you remember, or forget a fact by id. Use when someone tells you something worth keeping across conversations. A fact is the speaker\'s own unless it concerns everyone here (the household\'s wifi, address): then set "for": "everyone". Example: {"action": "remember", "fact": "is vegetarian"}.',
    input,
    needsConfirmation,
    confirmReason:
      "a lasting fact is shown in every later conversation: saving or forgetting a shared fact, or any fact after reading web pages, files, mail or tool results, needs your yes",
    run: (args, ctx) => {
      const person = senderOf(deps.store.history.run(ctx.runId));
      switch (args.action) {
        case "remember": {
          const owner = args.for === "everyone" ? undefined : person;
          // Told twice, a fact was kept twice: two rows, both in every later prompt.
          const same = known(args.fact, person?.id, args.for === "everyone");
          if (same) return `Already remembered #${same.id} (${scopeOf(same)}): ${same.fact}`;
          if (memory.count() >= maxFacts) throw new ToolError(`memory is full (${maxFacts} facts); forget one first`);
          const m = memory.remember(args.fact.trim(), owner);
          return `Remembered #${m.id} (${scopeOf(m)}): ${m.fact}`;
        }
        case "list": {
          const all = memory.visibleTo(person?.id);
          return all.length ? all.map((m) => `#${m.id}${m.owner ? "" : " (everyone)"}: ${m.fact}`).join("\n") : "Nothing remembered yet.";
        }
        case "forget": {
          const m = memory.get(args.id);
          if (!m || (m.owner !== null && m.owner !== person?.id)) throw new ToolError(`there is no fact #${args.id}`);
          memory.forget(args.id);
          return `Forgot #${args.id}.`;
        }
      }
    },
  });
}
