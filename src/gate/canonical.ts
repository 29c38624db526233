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

/**
 * A 64-bit fingerprint of a text as 16 hex digits, without node:crypto (src/random.ts says why): two
 * 32-bit FNV-1a lanes with different primes over its UTF-16 code units, each finished with MurmurHash3's
 * mixer and folded into the other. Equal texts give equal fingerprints; unequal ones collide about once
 * in 2^64. Not a cryptographic hash: it tells a tool's repeated result from a new one, for the repeat
 * guard and the audit.
 */
export function shortHash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    a = Math.imul(a ^ unit, 0x01000193);
    b = Math.imul(b ^ unit, 0x5bd1e995);
  }
  a = mix(a ^ text.length);
  b = mix(b ^ a);
  a = mix(a ^ b);
  return hex8(a) + hex8(b);
}

/** MurmurHash3's 32-bit finaliser: every input bit reaches every output bit. */
function mix(h: number): number {
  let x = h;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

const hex8 = (n: number) => n.toString(16).padStart(8, "0");
