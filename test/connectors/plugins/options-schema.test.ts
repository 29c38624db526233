import { Ajv } from "ajv";
import { afterEach, describe, expect, it, vi } from "vitest";
import { inSubset, validateSubset } from "../../../connectors/plugins/json-schema.js";
import { checkOptions, type OptionProblem } from "../../../connectors/plugins/options.js";
// @ts-expect-error: the example is JavaScript without types
import ntfy from "../../../examples/ntfy-connector/index.js";
// @ts-expect-error: a fixture in JavaScript without types
import memoryChat from "../../fixtures/plugins/memory-chat/index.js";

type Schema = Record<string, unknown>;
type Verdict = { ok: true; value: unknown } | { ok: false; problems: OptionProblem[] };

/** ajv as hermes ran it for every JSON Schema before the interpreter, with the same mapping of its errors. */
function ajvVerdict(schema: Schema, options: Record<string, unknown>): Verdict {
  const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, validateSchema: false });
  const value = structuredClone(options);
  let validate: ReturnType<typeof ajv.compile>;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    const message = `the plugin's options schema is not a valid JSON Schema: ${(err as Error).message}`;
    return { ok: false, problems: [{ path: [], message }] };
  }
  if (validate(value)) return { ok: true, value };
  const problems = (validate.errors ?? []).map((e) => {
    const path = e.instancePath
      .split("/")
      .slice(1)
      .map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, "/").replace(/~0/g, "~")));
    const params = e.params as { missingProperty?: string; additionalProperty?: string };
    if (e.keyword === "required") return { path, message: `missing required key '${params.missingProperty}'` };
    if (e.keyword === "additionalProperties")
      return { path: [...path, String(params.additionalProperty)], message: `unknown key '${params.additionalProperty}'` };
    return { path, message: e.message ?? "invalid" };
  });
  return { ok: false, problems };
}

function interpreted(schema: Schema, options: Record<string, unknown>): Verdict {
  const value = structuredClone(options);
  const problems = validateSubset(schema, value);
  return problems.length ? { ok: false, problems } : { ok: true, value };
}

const obj = (properties: Schema, rest: Schema = {}): Schema => ({ type: "object", properties, ...rest });

/** An object of one property a JSON type. */
const EVERY_TYPE = obj({
  s: { type: "string" },
  n: { type: "number" },
  i: { type: "integer" },
  b: { type: "boolean" },
  z: { type: "null" },
  o: { type: "object" },
  a: { type: "array" },
});

/** [what it covers, schema, options, how many problems ajv reports (so a case cannot silently test nothing)] */
const CASES: [string, Schema, Record<string, unknown>, number][] = [
  ["the ntfy example, valid: title defaults", ntfy.optionsSchema, { server: "https://ntfy.sh", topics: ["inbox"] }, 0],
  ["the ntfy example, given title kept", ntfy.optionsSchema, { server: "http://x", topics: ["a", "b"], title: "me" }, 0],
  ["the ntfy example, everything wrong", ntfy.optionsSchema, { server: "ftp://x", topics: [], token: 5, extra: 1, more: 2 }, 5],
  ["the ntfy example, a bad topic and missing keys", ntfy.optionsSchema, { topics: ["ok", "not ok", 3] }, 3],
  ["the memory-chat fixture", memoryChat.optionsSchema, { room: "", fail: "later", limit: 99.5, drop_ids: "yes" }, 5],
  ["an empty schema takes anything", {}, { a: [1, { b: null }] }, 0],
  [
    "annotations only",
    {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: "https://example.com/o.json",
      title: "t",
      description: "d",
      $comment: "c",
      examples: [{}],
      deprecated: false,
      readOnly: false,
      writeOnly: false,
    },
    { a: 1 },
    0,
  ],
  [
    "annotations beside keywords",
    obj({
      a: {
        type: "string",
        title: "A",
        description: "an a",
        examples: ["x"],
        deprecated: true,
        readOnly: true,
        writeOnly: true,
        $comment: "c",
      },
    }),
    { a: 1 },
    1,
  ],
  ["every scalar type", EVERY_TYPE, { s: 1, n: "1", i: 1.5, b: 0, z: false, o: [], a: {} }, 7],
  ["every type, right", EVERY_TYPE, { s: "", n: 1.5, i: -3, b: false, z: null, o: {}, a: [] }, 0],
  [
    "integer against number, with limits",
    obj({ i: { type: "integer", minimum: 2 }, n: { type: "number", minimum: 2 } }),
    { i: 1.5, n: 1.5 },
    3,
  ],
  [
    "integers written as floats, non-finite numbers",
    obj({ i: { type: "integer" }, j: { type: "integer" }, k: { type: "integer" }, n: { type: "number", minimum: 0 } }),
    { i: 2.0, j: Number.POSITIVE_INFINITY, k: Number.NaN, n: Number.NaN },
    2,
  ],
  [
    "type arrays",
    obj({
      a: { type: ["string", "null"] },
      b: { type: ["string", "null"] },
      c: { type: ["integer", "boolean"] },
      d: { type: ["array", "object"] },
      e: { type: ["number", "integer"] },
    }),
    { a: null, b: 1, c: 1.5, d: "x", e: 2 },
    3,
  ],
  ["a type array beside typed keywords", obj({ a: { type: ["string", "number"], minLength: 2, minimum: 5 } }), { a: 1 }, 1],
  [
    "the type error's place: a single type with its own keywords",
    obj({
      a: { type: "string", enum: ["a"], minLength: 2 },
      b: { type: "integer", enum: [1] },
      c: { type: "number", maximum: 3, const: 2 },
    }),
    { a: 5, b: "x", c: "y" },
    6,
  ],
  [
    "keywords of other types than the data's are skipped",
    obj({ a: { minLength: 2, minimum: 3, minItems: 1, required: ["x"] } }),
    { a: 1 },
    1,
  ],
  ["a single type, the data of another that has keywords", obj({ a: { type: "string", minLength: 1, minimum: 3 } }), { a: 1 }, 2],
  [
    "the four number limits, at and over the line",
    obj({
      a: { minimum: 1, maximum: 1, exclusiveMinimum: 0, exclusiveMaximum: 2 },
      b: { minimum: 1, maximum: 1, exclusiveMinimum: 1, exclusiveMaximum: 1 },
      c: { maximum: 0.1, minimum: -2.5 },
      d: { minimum: 1e21 },
    }),
    { a: 1, b: 1, c: -3, d: 5 },
    4,
  ],
  [
    "string lengths in code points",
    obj({
      a: { type: "string", minLength: 3 },
      b: { type: "string", maxLength: 1 },
      c: { type: "string", maxLength: 2 },
      d: { type: "string", minLength: 2, maxLength: 2 },
    }),
    { a: "😀😀", b: "😀", c: "e\u0301e\u0301", d: "\ud83d" },
    3,
  ],
  [
    "patterns with the u flag, escapes and quotes",
    obj({ a: { type: "string", pattern: "^\\p{Lu}" }, b: { pattern: '^\\d+"$' }, c: { pattern: "^.$" }, d: { pattern: "b" } }),
    { a: "élan", b: "12", c: "😀", d: "abc" },
    2,
  ],
  [
    "enum and const with scalars, objects, arrays and null",
    obj({
      a: { enum: ["x", 1, null] },
      b: { enum: [{ k: [1, 2] }, [3]] },
      c: { enum: [{ k: [1, 2] }, [3]] },
      d: { const: { k: 1, j: [true] } },
      e: { const: null },
      f: { const: 0 },
      g: { enum: [[3]] },
    }),
    { a: null, b: { k: [1, 2] }, c: { k: [2, 1] }, d: { j: [true], k: 1 }, e: 0, f: false, g: [3, 3] },
    4,
  ],
  [
    "array lengths",
    obj({ a: { type: "array", minItems: 2 }, b: { type: "array", maxItems: 1 }, c: { minItems: 1, maxItems: 1 } }),
    { a: [1], b: [1, 2], c: [] },
    3,
  ],
  [
    "unique scalars, by item type",
    obj({
      a: { type: "array", uniqueItems: true, items: { type: "string" } },
      b: { uniqueItems: true, items: { type: "number" } },
      c: { uniqueItems: true, items: { type: ["number", "string"] } },
      d: { uniqueItems: true, items: { type: "integer" } },
    }),
    { a: ["x", "y", "x", "y"], b: [1, "1", 2, "1"], c: [1, "1", 2, "2", 2], d: [1.5, 1.5, 2] },
    6,
  ],
  [
    "unique items compared deeply",
    obj({
      a: { uniqueItems: true },
      b: { uniqueItems: true, items: { type: "object" } },
      c: { uniqueItems: true },
      d: { uniqueItems: false },
    }),
    {
      a: [1, "1", { x: [1] }, { x: [1] }],
      b: [
        { p: 1, q: 2 },
        { q: 2, p: 1 },
      ],
      c: [[1], [1, 2], 1],
      d: [1, 1],
    },
    2,
  ],
  [
    "items: a schema for each, with paths",
    obj({ a: { type: "array", items: { type: "integer", minimum: 0 } } }),
    { a: [1, -1, "x", 2.5, 3] },
    3,
  ],
  [
    "arrays of arrays",
    obj({ a: { type: "array", items: { type: "array", items: { type: "integer" }, minItems: 1 } } }),
    { a: [[1], [], [1, "x"], "y"] },
    3,
  ],
  [
    "required, unknown and wrong keys together, in ajv's order",
    obj({ a: { type: "string" }, b: { type: "number" } }, { required: ["a", "c", "d"], additionalProperties: false }),
    { x: 1, b: "2", y: 3 },
    6,
  ],
  [
    "additionalProperties as a schema",
    obj({ a: { type: "string" } }, { additionalProperties: { type: "number", minimum: 1 } }),
    { a: "x", b: 2, c: 0, d: "e" },
    2,
  ],
  ["additionalProperties true and without properties", { type: "object", additionalProperties: true }, { x: 1 }, 0],
  ["additionalProperties false without properties", { additionalProperties: false }, { x: 1, 2: "two" }, 2],
  [
    "keys with slashes and tildes",
    obj(
      { "a/b": { type: "string" }, "c~d": { type: "object", properties: { "e/f~": { type: "number" } } } },
      { additionalProperties: false },
    ),
    { "a/b": 1, "c~d": { "e/f~": "x" }, "g/h~i": 1 },
    3,
  ],
  [
    "nested objects: problems at each level",
    obj(
      {
        db: obj(
          { host: { type: "string" }, port: { type: "integer", minimum: 1, maximum: 65535 } },
          { required: ["host"], additionalProperties: false },
        ),
      },
      { required: ["db"] },
    ),
    { db: { port: 70000, user: "x" } },
    3,
  ],
  ["a nested object of the wrong type", obj({ db: obj({ host: { type: "string" } }, { required: ["host"] }) }), { db: "localhost" }, 1],
  [
    "defaults: scalars, objects, arrays, and a required key met by its default",
    obj(
      {
        a: { type: "string", default: "x" },
        b: { type: "array", default: [1, { c: 2 }] },
        c: { type: "object", default: { d: { e: 1 } } },
        n: { default: null },
      },
      { required: ["a", "b"] },
    ),
    {},
    0,
  ],
  [
    "defaults inside a default (nested)",
    obj({ retry: obj({ count: { type: "integer", default: 3 }, delays: { type: "array", default: [1, 2] } }, { default: {} }) }),
    {},
    0,
  ],
  [
    "defaults never overwrite what is given, even falsy",
    obj({ a: { default: "x" }, b: { default: 5 }, c: { default: true }, d: obj({ e: { default: 1 }, f: { default: 2 } }) }),
    { a: "", b: 0, c: false, d: { e: 0 } },
    0,
  ],
  [
    "defaults in array items and in additional properties",
    obj(
      { list: { type: "array", items: obj({ on: { type: "boolean", default: true } }) } },
      { additionalProperties: obj({ level: { enum: ["low", "high"], default: "low" } }) },
    ),
    { list: [{}, { on: false }], x: {}, y: { level: "high" } },
    0,
  ],
  ["a default that is itself invalid is checked", obj({ a: { type: "integer", minimum: 5, default: 1 } }), {}, 1],
  [
    "a key set to undefined counts as missing",
    obj({ a: { default: 1 }, b: { type: "string" } }, { required: ["b"] }),
    { a: undefined, b: undefined },
    1,
  ],
  [
    "many problems at once, everywhere",
    obj(
      {
        name: { type: "string", minLength: 2, pattern: "^[a-z]+$" },
        tags: { type: "array", items: { type: "string", maxLength: 3 }, minItems: 2, uniqueItems: true },
        level: { type: "integer", enum: [1, 2, 3] },
        sub: obj({ on: { type: "boolean" } }, { additionalProperties: false, required: ["on"] }),
      },
      { required: ["name", "id"], additionalProperties: false },
    ),
    { name: "A", tags: ["long", "long"], level: 2.5, sub: { off: true }, zzz: 1 },
    11,
  ],
];

describe("the JSON Schema interpreter against ajv", () => {
  it.each(CASES)("%s", async (_what, schema, options, count) => {
    expect(inSubset(schema)).toBe(true);
    const expected = ajvVerdict(schema, options);
    expect(expected.ok ? 0 : expected.problems.length).toBe(count);
    expect(interpreted(schema, options)).toEqual(expected);
    // And through checkOptions, which leaves the caller's object as it was.
    const before = structuredClone(options);
    expect(await checkOptions(schema, options)).toEqual(expected);
    expect(options).toEqual(before);
  });

  it("fills a fresh copy of a default each time", () => {
    const schema = obj({ a: { default: { b: [1] } } });
    const one = { a: undefined } as Record<string, unknown>;
    const two = {} as Record<string, unknown>;
    validateSubset(schema, one);
    validateSubset(schema, two);
    expect(one.a).toEqual({ b: [1] });
    expect(one.a).not.toBe(two.a);
    expect(one.a).not.toBe((schema.properties as Schema).a);
  });
});

describe("which schemas are interpreted", () => {
  it("takes the example ntfy plugin's schema and the memory-chat fixture's", () => {
    expect(inSubset(ntfy.optionsSchema)).toBe(true);
    expect(inSubset(memoryChat.optionsSchema)).toBe(true);
  });

  it("leaves other keywords, other forms of known ones and malformed values to ajv", () => {
    for (const schema of [
      obj({ a: { oneOf: [{ type: "string" }] } }),
      obj({ a: { type: "string", format: "email" } }),
      { $ref: "#/definitions/a", definitions: { a: { type: "object" } } },
      { patternProperties: { "^x": { type: "string" } } },
      obj({ a: true }),
      obj({ a: { type: "array", items: [{ type: "string" }] } }),
      obj({ a: { type: "string", nullable: true } }),
      obj({ a: { type: "strnig" } }),
      obj({ a: { type: [] } }),
      obj({ a: { exclusiveMinimum: true, minimum: 1 } }),
      obj({ a: { pattern: "(" } }),
      obj({ a: { enum: [] } }),
      obj({ a: { required: "b" } }),
      obj({ a: { $id: "inner" } }),
      obj({ a: { "x-extension": 1 } }),
      obj({ a: { default: () => 1 } }),
      obj({ constructor: {} }, { toString: 1 }),
      [],
      true,
    ]) {
      expect(inSubset(schema), JSON.stringify(schema)).toBe(false);
    }
  });
});

describe("a schema outside the subset", () => {
  afterEach(() => vi.restoreAllMocks());

  it.each<[string, Schema, Record<string, unknown>]>([
    ["oneOf", obj({ a: { oneOf: [{ type: "string" }, { type: "number", minimum: 3 }] } }), { a: 1 }],
    ["anyOf and not", obj({ a: { anyOf: [{ type: "string" }, { not: { type: "number" } }] } }), { a: 2 }],
    ["format (unknown to plain ajv, so ignored)", obj({ a: { type: "string", format: "email" } }, { required: ["b"] }), { a: "not mail" }],
    ["$ref with defaults behind it", { $ref: "#/definitions/o", definitions: { o: obj({ a: { type: "string", default: "x" } }) } }, {}],
    [
      "patternProperties",
      { type: "object", patternProperties: { "^x": { type: "string" } }, additionalProperties: false },
      { x1: 1, y: 2 },
    ],
    ["a tuple of items", obj({ a: { type: "array", items: [{ type: "string" }, { type: "number" }] } }), { a: [1, "b"] }],
    ["a malformed type", obj({ a: { type: "strnig" } }), { a: "x" }],
    ["the draft-04 exclusiveMinimum", obj({ a: { minimum: 1, exclusiveMinimum: true } }), { a: 1 }],
  ])("%s gets ajv's verdict through checkOptions", async (_what, schema, options) => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(inSubset(schema)).toBe(false);
    expect(await checkOptions(schema, options)).toEqual(ajvVerdict(schema, options));
  });
});
