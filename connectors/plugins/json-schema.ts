/**
 * A JSON Schema interpreter for the keywords a plugin's options schema usually needs, so that a start does
 * not load ajv and compile the schema (~15–20 ms and ~1 MB). For a schema `inSubset` accepts, `validateSubset`
 * gives ajv's verdict as checkOptions runs it (draft 7 numbers, allErrors, useDefaults, strict: false): the
 * same problems, in ajv's order, and the same defaults filled in. Any other schema goes to ajv.
 */

type Schema = Record<string, unknown>;
type Path = (string | number)[];
/** As checkOptions reports one (its OptionProblem). */
type Problem = { path: Path; message: string };
type Check = (value: never, data: never, path: Path, out: Problem[], schema: Schema) => void;

const TYPES: ReadonlySet<unknown> = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);
const NUMBERS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems"];
// Annotations, and `const` (whose value is data).
const ANYTHING = ["const", "$schema", "$comment", "title", "description", "examples", "deprecated", "readOnly", "writeOnly"];
/** Whether `f` returns something rather than throwing. */
const works = (f: () => unknown) => {
  try {
    return f() !== undefined;
  } catch {
    return false;
  }
};
const finite = (v: unknown) => typeof v === "number" && Number.isFinite(v);
const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);
const typesOf = (schema: Schema): string[] => (schema.type === undefined ? [] : ([] as string[]).concat(schema.type as string));
/** Present as ajv sees it (a key set to undefined is missing), and the object's own. */
const has = (data: Schema, key: string) => Object.hasOwn(data, key) && data[key] !== undefined;
/** A schema's properties, without `__proto__` (as ajv). */
const propertiesOf = (properties: unknown) => Object.entries(properties as Record<string, Schema>).filter(([key]) => key !== "__proto__");

/** The subset: each keyword, with the values of it that ajv compiles (anything else goes to ajv, which may refuse it). */
const KEYWORDS: Record<string, (value: unknown, root: boolean) => boolean> = {
  type: (v) => (Array.isArray(v) ? v.length > 0 && v.every((t) => TYPES.has(t)) : TYPES.has(v)),
  properties: (v) => isObject(v) && Object.values(v).every((s) => known(s, false)),
  required: (v) => Array.isArray(v) && v.every((k) => typeof k === "string"),
  additionalProperties: (v) => typeof v === "boolean" || known(v, false),
  items: (v) => known(v, false),
  enum: (v) => Array.isArray(v) && v.length > 0,
  pattern: (v) => typeof v === "string" && works(() => new RegExp(v, "u")),
  // ajv writes a default into its code as JSON.
  default: (v) => works(() => JSON.stringify(v)),
  uniqueItems: (v) => typeof v === "boolean",
  // A nested $id would make ajv register (and compare) schema ids: that is left to it.
  $id: (v, root) => root && typeof v === "string",
  ...Object.fromEntries(NUMBERS.map((k) => [k, finite])),
  ...Object.fromEntries(ANYTHING.map((k) => [k, () => true])),
};

/** Whether `schema` uses only the keywords (and the forms of them) that `validateSubset` interprets. */
export function inSubset(schema: unknown): schema is Schema {
  return known(schema, true);
}

function known(schema: unknown, root: boolean): boolean {
  return isObject(schema) && Object.entries(schema).every(([k, v]) => Object.hasOwn(KEYWORDS, k) && KEYWORDS[k]?.(v, root));
}

/** The keywords by the type of data they apply to (none: any), each group in the order ajv runs them. */
const GROUPS: [string | undefined, string[]][] = [
  [undefined, ["const", "enum"]],
  ["number", ["maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum"]],
  ["string", ["maxLength", "minLength", "pattern"]],
  ["array", ["maxItems", "minItems", "items", "uniqueItems"]],
  ["object", ["required", "additionalProperties", "properties"]],
];

/**
 * Checks `data` against a schema `inSubset` accepted and returns every problem. As ajv's `useDefaults`, a
 * missing property whose schema has a `default` is set to a copy of it, in `data` itself.
 */
export function validateSubset(schema: Schema, data: unknown, path: Path = [], out: Problem[] = []): Problem[] {
  const types = typesOf(schema);
  const uses = (keywords: string[]) => keywords.some((k) => schema[k] !== undefined);
  // As ajv: a single type whose own keywords are present is reported where those run; any other, first.
  const typeFirst = types.length > 0 && !(types.length === 1 && GROUPS.some(([t, ks]) => t === types[0] && uses(ks)));
  const typeProblem = { path, message: `must be ${types.join(",")}` };
  if (typeFirst && !types.some((t) => isType(t, data))) out.push(typeProblem);
  for (const [type, keywords] of GROUPS) {
    if (!uses(keywords)) continue;
    if (type && !isType(type, data)) {
      if (!typeFirst && types[0] === type) out.push(typeProblem);
      continue;
    }
    if (type === "object") fillDefaults(schema, data as Schema);
    for (const k of keywords) {
      if (schema[k] !== undefined) (CHECKS[k] as Check)(schema[k] as never, data as never, path, out, schema);
    }
  }
  return out;
}

const fail = (out: Problem[], path: Path, message: string) => out.push({ path, message });
const bound = (op: string, ok: (d: number, v: number) => boolean) => (v: number, d: number, path: Path, out: Problem[]) =>
  ok(d, v) || fail(out, path, `must be ${op} ${v}`);
// ajv counts a string's length in code points, as the string iterator does.
const length = (s: string) => [...s].length;

const CHECKS: Record<string, Check> = {
  const: (v: unknown, d: unknown, path, out) => same(d, v) || fail(out, path, "must be equal to constant"),
  enum: (v: unknown[], d: unknown, path, out) => v.some((e) => same(d, e)) || fail(out, path, "must be equal to one of the allowed values"),
  maximum: bound("<=", (d, v) => d <= v),
  minimum: bound(">=", (d, v) => d >= v),
  exclusiveMaximum: bound("<", (d, v) => d < v),
  exclusiveMinimum: bound(">", (d, v) => d > v),
  maxLength: (v: number, d: string, path, out) => length(d) <= v || fail(out, path, `must NOT have more than ${v} characters`),
  minLength: (v: number, d: string, path, out) => length(d) >= v || fail(out, path, `must NOT have fewer than ${v} characters`),
  pattern: (v: string, d: string, path, out) => new RegExp(v, "u").test(d) || fail(out, path, `must match pattern "${v}"`),
  maxItems: (v: number, d: unknown[], path, out) => d.length <= v || fail(out, path, `must NOT have more than ${v} items`),
  minItems: (v: number, d: unknown[], path, out) => d.length >= v || fail(out, path, `must NOT have fewer than ${v} items`),
  uniqueItems: (v: boolean, d: unknown[], path, out, schema) => {
    const pair = v && d.length > 1 ? duplicate(d, isObject(schema.items) ? typesOf(schema.items) : []) : undefined;
    if (pair) fail(out, path, `must NOT have duplicate items (items ## ${pair[0]} and ${pair[1]} are identical)`);
  },
  items: (v: Schema, d: unknown[], path, out) => {
    for (const [i, item] of d.entries()) validateSubset(v, item, [...path, i], out);
  },
  required: (v: string[], d: Schema, path, out) => {
    for (const key of v) if (!has(d, key)) fail(out, path, `missing required key '${key}'`);
  },
  additionalProperties: (v: boolean | Schema, d: Schema, path, out, schema) => {
    if (v === true) return;
    const declared = isObject(schema.properties) ? schema.properties : {};
    for (const key of Object.keys(d)) {
      if (Object.hasOwn(declared, key)) continue;
      if (v === false) fail(out, [...path, key], `unknown key '${key}'`);
      else validateSubset(v, d[key], [...path, key], out);
    }
  },
  properties: (v: Record<string, Schema>, d: Schema, path, out) => {
    for (const [key, sub] of propertiesOf(v)) if (has(d, key)) validateSubset(sub, d[key], [...path, key], out);
  },
};

/** ajv's useDefaults: before an object's keywords run, each missing property gets a fresh copy of its default. */
function fillDefaults(schema: Schema, data: Schema): void {
  if (!isObject(schema.properties)) return;
  for (const [key, sub] of propertiesOf(schema.properties)) {
    if (sub.default !== undefined && !has(data, key)) data[key] = JSON.parse(JSON.stringify(sub.default));
  }
}

/**
 * The first pair of equal items in ajv's order and numbering: for scalar item types it looks items up by
 * value from the end (the later index first); otherwise it compares each item with those before it.
 */
function duplicate(items: unknown[], itemTypes: string[]): [number, number] | undefined {
  if (itemTypes.length > 0 && !itemTypes.some((t) => t === "object" || t === "array")) {
    const seen = new Map<unknown, number>();
    for (let i = items.length - 1; i >= 0; i--) {
      const item = items[i];
      if (!itemTypes.some((t) => isType(t, item))) continue;
      const later = seen.get(item);
      if (later !== undefined) return [later, i];
      seen.set(item, i);
    }
    return undefined;
  }
  for (let i = items.length - 1; i > 0; i--) {
    for (let j = i - 1; j >= 0; j--) if (equal(items[i], items[j])) return [j, i];
  }
  return undefined;
}

/** JSON types as ajv tells them apart without strictNumbers (so Infinity is an integer, NaN a number). */
function isType(type: string, data: unknown): boolean {
  if (type === "object") return isObject(data);
  if (type === "array") return Array.isArray(data);
  if (type === "null") return data === null;
  if (type === "integer") return typeof data === "number" && !(data % 1) && !Number.isNaN(data);
  return typeof data === type;
}

/** `const` and `enum`: a scalar by ===, an object or array by deep equality. */
function same(data: unknown, value: unknown): boolean {
  return typeof value === "object" && value !== null ? equal(data, value) : data === value;
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && equal(a[k], b[k]));
  }
  return Number.isNaN(a) && Number.isNaN(b);
}
