import { createHash } from "node:crypto";

/** JSON with object keys sorted at every depth, so equal arguments give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? "null";
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
  return out;
}

/** The identity of a call for repeat detection: tool name plus canonical arguments. */
export function callSignature(tool: string, args: unknown): string {
  return `${tool} ${canonicalJson(args ?? {})}`;
}

export function shortHash(text: string): string {
  return createHash("sha1").update(text).digest("hex").slice(0, 16);
}
