/**
 * Secrets written inside URLs: a password in the userinfo (`https://user:pass@host/…`) and query values whose
 * names say they are credentials (`?token=…`, `?api_key=…`). `config check`, `hermes status`, the dashboard,
 * usage rows and logs show such URLs with those parts masked.
 */
const SECRET_PARAM = /token|key|secret|pass|auth|sig|session|credential/i;
const MASK = "********";

/** The secret parts of `value` when it is an http(s) URL, else none. */
export function urlSecrets(value: string): string[] {
  const url = parseUrl(value);
  if (!url) return [];
  const found = url.password ? [decodeURIComponent(url.password), url.password] : [];
  for (const [name, v] of url.searchParams) if (v && SECRET_PARAM.test(name)) found.push(v, encodeURIComponent(v));
  return [...new Set(found)];
}

/** `value` with the secret parts of a URL masked; anything that is not an http(s) URL is returned as it is. */
export function maskUrl(value: string): string {
  const url = parseUrl(value);
  if (!url || (!url.password && ![...url.searchParams].some(([n, v]) => v && SECRET_PARAM.test(n)))) return value;
  if (url.password) url.password = MASK;
  for (const [name, v] of [...url.searchParams]) if (v && SECRET_PARAM.test(name)) url.searchParams.set(name, MASK);
  return url.toString();
}

/**
 * `text` with the secret parts of every http(s) URL in it masked: for messages that name an endpoint
 * (a model's or speech server's error, a probe's detail), which reach replies, `hermes status` and doctor.
 */
export function maskUrlsInText(text: string): string {
  return text.includes("://") ? text.replace(/https?:\/\/[^\s"'<>]+/gi, (url) => maskUrl(url)) : text;
}

/** Every string in `value` (objects and arrays walked) that is a URL, with its secret parts masked. */
export function maskUrlsDeep<T>(value: T, depth = 0): T {
  if (typeof value === "string") return maskUrl(value) as T;
  if (depth > 8 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => maskUrlsDeep(v, depth + 1)) as T;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskUrlsDeep(v, depth + 1)])) as T;
}

/** The URL secrets anywhere in `value`, for the log's scrubber. */
export function urlSecretsDeep(value: unknown, depth = 0): string[] {
  if (typeof value === "string") return urlSecrets(value);
  if (depth > 8 || value === null || typeof value !== "object") return [];
  return Object.values(value).flatMap((v) => urlSecretsDeep(v, depth + 1));
}

function parseUrl(value: string): URL | undefined {
  if (!/^https?:\/\//i.test(value)) return undefined;
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/**
 * A command-line flag whose name says its value is a credential (`--token`, `--api-key=…`, `-password`): one
 * of its words is, so `--keyboard` is not, and a negation (`--no-auth`) takes no value.
 */
const SECRET_FLAG = /^--?(?!no-)(?:[a-z0-9]+[-_])*(?:token|secret|pass|passwd|password|key|apikey|auth|credentials?)(?:[-_][a-z0-9]+)*$/i;

/**
 * A command's arguments as `hermes status`, doctor and `config check` show them: each of `secrets` (the
 * values `${VAR}`s brought in) masked wherever it stands, the value of a flag named for a credential
 * (`--token X`, `--token=X`) masked whole, and the secrets inside URLs.
 */
export function maskArgs(args: readonly string[], secrets: readonly string[] = []): string[] {
  return args.map((arg, i) => {
    const flag = /^(--?[\w-]+)=/.exec(arg);
    if (flag?.[1] && SECRET_FLAG.test(flag[1])) return `${flag[1]}=${MASK}`;
    if (i > 0 && SECRET_FLAG.test(args[i - 1] ?? "") && !arg.startsWith("-")) return MASK;
    const known = secrets.reduce((text, s) => (s.length >= 4 && text.includes(s) ? text.replaceAll(s, MASK) : text), arg);
    return maskUrlsInText(known);
  });
}
