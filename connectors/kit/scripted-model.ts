import { modelClient } from "../../src/model/client.js";
import type { ChatOptions, ModelClient, ModelRequest, ModelResult } from "../../src/model/types.js";

/** The tool the kit's model calls to raise an approval: it always asks first. */
export const KIT_TOOL = "kit_action";

/**
 * A model that answers from a script keyed by the message's first word, so the kit knows what each
 * chat should show. It runs in the kit's process behind the real runner, gate and store:
 *   hello X       → "reply to hello X"
 *   long N        → numbered lines, about 2.5 × N characters in all (N: the plugin's limits.text)
 *   stream X      → "streamed reply X: w1 … w12", streamed in twelve pieces
 *   approve-me X  → a call of kit_action (which asks for approval), then "kit action X ran" or "kit action was not run"
 */
export interface ScriptedModel {
  client: ModelClient;
  /** The first line of the user message of each model call, in order. */
  calls: string[];
}

const WORDS = Array.from({ length: 12 }, (_, i) => `w${i + 1}`);

export function createScriptedModel(): ScriptedModel {
  const calls: string[] = [];
  const answer = async (req: ModelRequest, options: ChatOptions = {}): Promise<ModelResult> => {
    const last = req.messages.at(-1);
    if (last?.role === "tool") return reply(/kit action \S+ ran/.exec(last.content)?.[0] ?? "kit action was not run");
    const lastUser = [...req.messages].reverse().find((m) => m.role === "user");
    const line = (typeof lastUser?.content === "string" ? lastUser.content : "").split("\n")[0]?.trim() ?? "";
    calls.push(line);
    const [word = "", arg = ""] = line.split(/\s+/);
    if (word === "long") return reply(longText(Number(arg) || 4000));
    if (word === "stream") return streamed(`streamed reply ${arg}: ${WORDS.join(" ")}`, options);
    if (word === "approve-me")
      return {
        ok: true,
        text: "",
        toolCalls: [{ id: `k${calls.length}`, name: KIT_TOOL, args: { tag: arg } }],
        usage: {},
        finishReason: "stop",
      };
    return reply(`reply to ${line}`);
  };
  const client = modelClient({
    provider: "ollama",
    baseUrl: "scripted",
    modelName: "scripted",
    probe: async () => ({ reachable: true, modelPresent: true, detail: "the conformance kit's scripted model" }),
    prepare: (req) => (options) => answer(req, options),
  });
  return { client, calls };
}

function reply(text: string): ModelResult {
  return { ok: true, text, toolCalls: [], usage: {}, finishReason: "stop" };
}

/** Numbered lines, so the kit can tell that split messages arrived whole and in order. */
export function longText(limit: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 1; size < limit * 2.5; i++) {
    const line = `line ${String(i).padStart(4, "0")} ${"lorem ipsum ".repeat(3).trim()}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

async function streamed(text: string, options: ChatOptions): Promise<ModelResult> {
  const pieces = text.split(/(?= )/);
  for (const piece of pieces) {
    options.onText?.(piece);
    await new Promise((resolve) => setTimeout(resolve, 60));
  }
  return reply(text);
}
