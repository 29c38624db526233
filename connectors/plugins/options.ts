import { errorMessage } from "../../src/errors.js";
import type { OptionsSchema } from "../sdk/types.js";
import { inSubset, validateSubset } from "./json-schema.js";

/** One problem with a plugin's options: where under `options` (a key path) and what is wrong. */
export interface OptionProblem {
  path: (string | number)[];
  message: string;
}

/**
 * Checks options against a plugin's schema (zod: anything with safeParse; else a JSON Schema). With
 * `strictSchema` a JSON Schema is first checked against its own standard (ajv's meta-schema, ~15–20 ms
 * to compile): `config check`, `doctor` and the conformance kit do that; a start trusts a schema they passed.
 * A JSON Schema that uses only the usual keywords (`inSubset`) is interpreted here; ajv compiles any other.
 */
export async function checkOptions(
  schema: OptionsSchema,
  options: Record<string, unknown>,
  strictSchema = false,
): Promise<{ ok: true; value: unknown } | { ok: false; problems: OptionProblem[] }> {
  if (typeof (schema as { safeParse?: unknown }).safeParse === "function") return checkZod(schema as ZodLike, options);
  return checkJsonSchema(schema as Record<string, unknown>, options, strictSchema);
}

interface ZodLike {
  safeParse(value: unknown): { success: boolean; data?: unknown; error?: { issues?: { path?: PropertyKey[]; message?: string }[] } };
}

function checkZod(schema: ZodLike, options: Record<string, unknown>) {
  const parsed = schema.safeParse(options);
  if (parsed.success) return { ok: true as const, value: parsed.data };
  const issues = parsed.error?.issues ?? [];
  const problems = issues.map((i) => ({
    path: (i.path ?? []).map((p) => (typeof p === "number" ? p : String(p))),
    message: (i.message ?? "invalid").replace(/^Invalid input: /, ""),
  }));
  return { ok: false as const, problems: problems.length ? problems : [{ path: [], message: "invalid options" }] };
}

/** What the JSON Schema standard says is wrong with `schema` (ajv's meta-schema), or undefined when it is valid. */
export async function jsonSchemaProblem(schema: unknown): Promise<string | undefined> {
  const { Ajv } = await import("ajv");
  const ajv = new Ajv({ allErrors: true, strict: false });
  try {
    return ajv.validateSchema(schema as Record<string, unknown>) ? undefined : ajv.errorsText(ajv.errors);
  } catch (err) {
    return errorMessage(err);
  }
}

async function checkJsonSchema(schema: Record<string, unknown>, options: Record<string, unknown>, strictSchema: boolean) {
  const invalid = (why: string) => ({
    ok: false as const,
    problems: [{ path: [], message: `the plugin's options schema is not a valid JSON Schema: ${why}` }],
  });
  const problem = strictSchema ? await jsonSchemaProblem(schema) : undefined;
  if (problem) return invalid(problem);
  const value = structuredClone(options);
  if (inSubset(schema)) {
    const problems = validateSubset(schema, value);
    return problems.length ? { ok: false as const, problems } : { ok: true as const, value };
  }
  // ajv is loaded only for a schema with other keywords ($ref, oneOf, format, …).
  const { Ajv } = await import("ajv");
  const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, validateSchema: false });
  let validate: ReturnType<typeof ajv.compile>;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    return invalid(errorMessage(err));
  }
  if (validate(value)) return { ok: true as const, value };
  const problems = (validate.errors ?? []).map((e) => {
    const path = e.instancePath
      .split("/")
      .slice(1)
      .map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, "/").replace(/~0/g, "~")));
    const missing = e.keyword === "required" ? String((e.params as { missingProperty?: string }).missingProperty ?? "") : "";
    const extra =
      e.keyword === "additionalProperties" ? String((e.params as { additionalProperty?: string }).additionalProperty ?? "") : "";
    if (missing) return { path, message: `missing required key '${missing}'` };
    if (extra) return { path: [...path, extra], message: `unknown key '${extra}'` };
    return { path, message: e.message ?? "invalid" };
  });
  return { ok: false as const, problems };
}
