import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";

/** Keys that cost tokens and tell a model nothing it needs to make a call. */
const NOISE = new Set(["$schema", "$id", "$comment", "title", "examples", "deprecated", "readOnly", "writeOnly"]);
const MAX_DESCRIPTION = 1024;

/** The server's input schema without noise; property names (which may be "title") are kept. */
export function trimSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out = trimNode(schema) as Record<string, unknown>;
  if (out.type === undefined && out.properties === undefined) out.type = "object";
  return out;
}

function trimNode(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(trimNode);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (NOISE.has(key)) continue;
    if (key === "description" && typeof value === "string") out[key] = trimDescription(value);
    else if ((key === "properties" || key === "$defs" || key === "definitions") && isObject(value)) out[key] = mapValues(value, trimNode);
    else out[key] = trimNode(value);
  }
  return out;
}

/** Whitespace runs collapsed; a very long text cut at a sentence end. */
export function trimDescription(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= MAX_DESCRIPTION) return flat;
  const head = flat.slice(0, MAX_DESCRIPTION);
  const end = head.lastIndexOf(". ");
  return `${end > MAX_DESCRIPTION / 2 ? head.slice(0, end + 1) : head} …`;
}

let ajv: Ajv | undefined;

/** Checks arguments against a server's JSON Schema; returns what is wrong, or [] when they fit. */
export function compileValidator(schema: Record<string, unknown>): (args: unknown) => string[] {
  let validate: ValidateFunction;
  try {
    ajv ??= new Ajv({ allErrors: true, strict: false, validateFormats: false });
    const { $schema: _ignored, ...rest } = schema;
    validate = ajv.compile(withoutPatterns(rest) as Record<string, unknown>);
  } catch (err) {
    const reason = `the server's schema for this tool cannot be checked: ${(err as Error).message}`;
    return () => [reason];
  }
  return (args) => (validate(args) ? [] : (validate.errors ?? []).slice(0, 10).map(describe));
}

/**
 * The schema without its regular expressions (`pattern`, `patternProperties`), which are left to the server
 * to check. A server's pattern is not ours to run: one that backtracks (`^(a+)+$`, `^(a|a)*$`, `^\d*\d*\d*x$`)
 * takes seconds to hours on a model's argument of a few dozen characters, on the daemon's only thread, and no
 * test of a pattern's shape catches every such one. An object with `patternProperties` takes other keys too
 * (which of them the patterns cover is not known here), so nothing is refused that the server would take.
 */
function withoutPatterns(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutPatterns);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  const patterned = "patternProperties" in node;
  for (const [key, value] of Object.entries(node)) {
    if ((key === "pattern" && typeof value === "string") || key === "patternProperties") continue;
    if (patterned && (key === "additionalProperties" || key === "unevaluatedProperties")) continue;
    if (SCHEMA_MAPS.has(key) && isObject(value)) out[key] = mapValues(value, withoutPatterns);
    else if (DATA.has(key)) out[key] = value;
    else out[key] = withoutPatterns(value);
  }
  return out;
}

/** Keywords whose value is data, not a schema: a `pattern` key in it is an argument's value, kept. */
const DATA = new Set(["const", "enum", "default", "examples"]);

/** Keywords whose value maps names (which may be "pattern") to schemas. */
const SCHEMA_MAPS = new Set(["properties", "$defs", "definitions", "dependentSchemas"]);

function describe(error: ErrorObject): string {
  const at = error.instancePath ? error.instancePath.slice(1).replaceAll("/", ".") : "arguments";
  const extra = error.keyword === "enum" ? `: ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}` : "";
  const unknownKey = error.keyword === "additionalProperties" ? ` ('${String(error.params.additionalProperty)}')` : "";
  return `${at}: ${error.message ?? "is invalid"}${extra}${unknownKey}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function mapValues(value: Record<string, unknown>, f: (v: unknown) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, f(v)]));
}
