/** The daemon's side of the prompt: the system prompt a run starts with, and a warning when it crowds the window. */
import { DEFAULT_SYSTEM_PROMPT } from "../agent/context.js";
import type { Config } from "../config/schema.js";
import type { Logger } from "../log.js";
import { promptTokens } from "../model/tokens.js";
import type { ToolSpec } from "../model/types.js";
import { skillIndexText } from "../skills/startup.js";
import { memoryBlock, memoryParts, type Person } from "../store/memory.js";
import type { Store } from "../store/store.js";
import type { State } from "./parts.js";

/** What the memory block holds at most, the facts' lines counted. */
const MEMORY_CHARS = 2000;

/**
 * The fixed prompt, the skill index (changed only by a reload), then memories (which change more often):
 * the stable part first. In a group the system prompt holds only the shared facts, and the sender's own
 * are the run's `note`, after their message, so a new speaker does not change the prompt's start.
 */
export function promptFor(
  config: Config,
  store: Store,
  state: Pick<State, "tools" | "skills">,
  sender?: Person,
  group = false,
): { system: string; note?: string } {
  const base = config.agent.system_prompt ?? DEFAULT_SYSTEM_PROMPT;
  const skillIndex = skillIndexText(state.skills, state.tools.has("skill"));
  let memories = "";
  let note = "";
  if (state.tools.has("memory")) {
    const facts = store.memory.visibleTo(sender?.id);
    if (group) ({ shared: memories, own: note } = memoryParts(facts, MEMORY_CHARS, sender));
    else memories = memoryBlock(facts, MEMORY_CHARS, sender);
  }
  return { system: [base, skillIndex, memories].filter(Boolean).join("\n\n"), ...(note && { note }) };
}

/**
 * When the system prompt and the tool signatures leave a chat little of the prompt's room (the window less
 * the answer's share), says so with the fix: below that, every request is cut to its newest turn, or over.
 */
export function warnOfSmallRoom(system: string, specs: ToolSpec[], contextTokens: number, outputTokens: number, log: Logger): void {
  const room = contextTokens - outputTokens;
  const fixed = promptTokens([{ role: "system", content: system }], specs);
  if (fixed <= room * 0.6) return;
  const none = fixed >= room;
  log[none ? "error" : "warn"](
    { fixedTokens: fixed, roomTokens: room },
    `the system prompt and tool signatures take ~${fixed} of the prompt's ${room} tokens (model.context_tokens less max_output_tokens): ${none ? "no" : "little"} room is left for the chat; raise model.context_tokens (and the model server's window), lower model.max_output_tokens or enable fewer tools`,
  );
}
