import { type Document, isMap, isScalar, parseDocument } from "yaml";
import type { Skill, SkillProblem } from "./types.js";

const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;
const MAX_COMPATIBILITY = 500;
const STANDARD_KEYS = new Set(["name", "description", "license", "compatibility", "metadata", "allowed-tools"]);
/** Keys other agents add (Claude Code's): understood, so not reported as unknown. */
const KNOWN_EXTENSIONS = new Set(["user-invocable", "disable-model-invocation", "version", "argument-hint", "model"]);

export type Parsed = { skill: Skill; notes: SkillProblem[] } | { problem: SkillProblem };

/** Reads one SKILL.md: front matter checked against the standard, the body without it. */
export function parseSkill(text: string, file: string, dir: string, folderName: string): Parsed {
  const fail = (problem: string): Parsed => ({ problem: { file, problem, skipped: true } });
  const split = splitFrontMatter(text);
  if (!split) return fail("no YAML front matter: the file must start with a line '---', then name and description, then '---'");
  const doc = parseDocument(split.yaml, { prettyErrors: false, uniqueKeys: true });
  const error = doc.errors[0];
  if (error) return fail(`the front matter is not valid YAML: ${error.message.split("\n")[0]}`);
  if (!isMap(doc.contents)) return fail("the front matter must be a mapping of keys (name: …, description: …)");
  const data = readFrontMatter(doc);
  const problem = checkName(data.name, folderName) ?? checkDescription(data.description) ?? checkOptional(data);
  if (problem) return fail(problem);
  const notes = Object.keys(data)
    .filter((key) => !STANDARD_KEYS.has(key) && !KNOWN_EXTENSIONS.has(key))
    .map((key) => ({ file, problem: `unknown key '${key}' kept but not used`, skipped: false }));
  const extra = Object.fromEntries(Object.entries(data).filter(([key]) => !STANDARD_KEYS.has(key)));
  const skill: Skill = {
    name: data.name as string,
    description: (data.description as string).trim(),
    dir,
    file,
    body: split.body,
    extra,
    userInvocable: data["user-invocable"] !== false,
    hiddenFromModel: data["disable-model-invocation"] === true,
    ...optionalKeys(data),
  };
  return { skill, notes };
}

/**
 * The front matter's keys as values. `name: 2048` and `description: 42` are YAML numbers, but a name or a
 * description is text: they keep the characters written. A key given no value (`license:`) counts as not given.
 */
function readFrontMatter(doc: Document): Record<string, unknown> {
  const data = doc.toJS() as Record<string, unknown>;
  for (const key of ["name", "description"]) {
    const node = doc.get(key, true);
    if (isScalar(node) && (typeof node.value === "number" || typeof node.value === "boolean") && node.source !== undefined)
      data[key] = node.source;
  }
  for (const [key, value] of Object.entries(data)) if (value === null && key !== "name" && key !== "description") delete data[key];
  return data;
}

/** The YAML between the first two `---` lines and the Markdown after them; undefined without front matter. */
function splitFrontMatter(text: string): { yaml: string; body: string } | undefined {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trimEnd() !== "---") return undefined;
  const end = lines.findIndex((line, i) => i > 0 && line.trimEnd() === "---");
  if (end < 0) return undefined;
  return {
    yaml: lines.slice(1, end).join("\n"),
    body: lines
      .slice(end + 1)
      .join("\n")
      .trim(),
  };
}

function checkName(name: unknown, folderName: string): string | undefined {
  if (typeof name !== "string" || name === "") return "'name' is missing; give the skill's folder name";
  if (name.length > MAX_NAME) return `'name' is ${name.length} characters; at most ${MAX_NAME}`;
  if (!NAME.test(name)) return `'name' '${name}' may hold only a-z, 0-9 and single '-' between them`;
  if (name !== folderName) return `'name' '${name}' differs from its folder's name '${folderName}'`;
  return undefined;
}

function checkDescription(description: unknown): string | undefined {
  if (typeof description !== "string" || description.trim() === "")
    return "'description' is missing; say what the skill does and when to use it";
  if (description.length > MAX_DESCRIPTION) return `'description' is ${description.length} characters; at most ${MAX_DESCRIPTION}`;
  return undefined;
}

function checkOptional(data: Record<string, unknown>): string | undefined {
  const { license, compatibility, metadata } = data;
  const allowed = data["allowed-tools"];
  if (license !== undefined && typeof license !== "string") return "'license' must be text";
  if (compatibility !== undefined && (typeof compatibility !== "string" || compatibility.length > MAX_COMPATIBILITY))
    return `'compatibility' must be text of at most ${MAX_COMPATIBILITY} characters`;
  if (metadata !== undefined && (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)))
    return "'metadata' must be a mapping of keys to text";
  const list = Array.isArray(allowed) && allowed.every((t) => typeof t === "string");
  if (allowed !== undefined && typeof allowed !== "string" && !list) return "'allowed-tools' must be text (tool names separated by spaces)";
  for (const key of ["user-invocable", "disable-model-invocation"])
    if (data[key] !== undefined && typeof data[key] !== "boolean") return `'${key}' must be true or false`;
  return undefined;
}

function optionalKeys(data: Record<string, unknown>): Pick<Skill, "license" | "compatibility" | "metadata" | "allowedTools"> {
  const allowed = data["allowed-tools"];
  const metadata = data.metadata as Record<string, unknown> | undefined;
  return {
    ...(typeof data.license === "string" && { license: data.license }),
    ...(typeof data.compatibility === "string" && { compatibility: data.compatibility }),
    ...(metadata && { metadata: Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, asText(v)])) }),
    ...(allowed !== undefined && { allowedTools: Array.isArray(allowed) ? allowed.join(" ") : String(allowed) }),
  };
}

function asText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}
