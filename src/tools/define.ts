import { z } from "../config/zod.js";
import type { ToolSpec } from "../model/types.js";
import { DEFAULT_MAX_RESULT_CHARS, DEFAULT_TOOL_TIMEOUT_MS, type Tool, type ToolDefinition } from "./types.js";

/** Builds a Tool with safe defaults: not read-only, no confirmation, 4000-char results, 30 s timeout. */
export function defineTool<I>(def: ToolDefinition<I>): Tool<I> {
  return {
    name: def.name,
    description: def.description,
    input: def.input,
    readOnly: def.readOnly ?? false,
    needsConfirmation: def.needsConfirmation ?? false,
    ...(def.confirmReason ? { confirmReason: def.confirmReason } : {}),
    maxResultChars: def.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
    timeoutMs: def.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    run: async (args, ctx) => def.run(args, ctx),
  };
}

/** Applies `tools.<name>.max_result_chars` / `timeout_s` overrides from the config. */
export function withSettings<I>(tool: Tool<I>, settings: { max_result_chars?: number; timeout_s?: number } | undefined): Tool<I> {
  if (!settings) return tool;
  return {
    ...tool,
    maxResultChars: settings.max_result_chars ?? tool.maxResultChars,
    timeoutMs: settings.timeout_s !== undefined ? settings.timeout_s * 1000 : tool.timeoutMs,
  };
}

/**
 * The model-facing signature: JSON Schema from the zod input, without what costs prompt tokens and tells a
 * model nothing. zod still validates every call strictly (unknown keys, lengths, the variant of an action).
 */
export function toolSpec(tool: Tool): ToolSpec {
  if (tool.parameters) return { name: tool.name, description: tool.description, parameters: tool.parameters };
  const schema = z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete schema.$schema;
  return { name: tool.name, description: tool.description, parameters: lean(flatten(schema)) as Record<string, unknown> };
}

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * One object with an enum for an action union (`oneOf` of objects that each fix `action` to a constant):
 * the union's properties side by side, the action's description saying which other keys each action
 * needs. A third of the bytes, and small models fill one flat object more reliably than they pick a
 * variant. Left as it is when the variants disagree about a property.
 */
function flatten(schema: JsonObject): JsonObject {
  const variants = schema.oneOf ?? schema.anyOf;
  if (!Array.isArray(variants) || variants.length < 2 || !variants.every((v) => isObject(v) && isObject(v.properties))) return schema;
  const objects = variants as { properties: Record<string, JsonObject>; required?: string[] }[];
  const key = Object.keys(objects[0]?.properties ?? {}).find((k) => objects.every((v) => v.properties[k]?.const !== undefined));
  if (!key) return schema;
  const properties: Record<string, JsonObject> = {};
  const needs: string[] = [];
  for (const variant of objects) {
    for (const [name, prop] of Object.entries(variant.properties)) {
      if (name === key) continue;
      const { description, ...shape } = prop;
      const seen = properties[name];
      if (seen) {
        const { description: _d, ...seenShape } = seen;
        if (JSON.stringify(seenShape) !== JSON.stringify(shape)) return schema;
        if (description !== undefined && seen.description === undefined) seen.description = description;
      } else properties[name] = { ...prop };
    }
    const required = (variant.required ?? []).filter((r) => r !== key);
    if (required.length) needs.push(`${String(variant.properties[key]?.const)}: ${required.join(", ")}`);
  }
  const action: JsonObject = { type: "string", enum: objects.map((v) => v.properties[key]?.const) };
  if (needs.length) action.description = `needs ${needs.join("; ")}`;
  return { type: "object", properties: { [key]: action, ...properties }, required: [key] };
}

/**
 * Drops what costs tokens and tells a model nothing: JavaScript's safe-integer bounds, `additionalProperties:
 * false` (an unknown key is still refused, with its name), a minimum length of one, lengths of a thousand
 * characters or more, and that an integer (an id) is positive.
 */
function lean(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(lean);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === "maximum" || key === "minimum") && Math.abs(Number(value)) === Number.MAX_SAFE_INTEGER) continue;
    if (key === "additionalProperties" && value === false) continue;
    if (key === "minLength" && value === 1) continue;
    if (key === "exclusiveMinimum" && value === 0 && (node as JsonObject).type === "integer") continue;
    if (key === "maxLength" && Number(value) >= 1000) continue;
    out[key] = lean(value);
  }
  return out;
}
