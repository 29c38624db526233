import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
  Scalar,
  visit,
  type YAMLError,
} from "yaml";
import type { z } from "zod";
import { ConfigError, type ConfigProblem } from "../errors.js";
import { maskArgs, maskUrlsDeep, urlSecretsDeep } from "../url-secrets.js";
import { substituteEnvRefs } from "./env.js";
import { type Config, configSchema } from "./schema.js";

export interface LoadedConfig {
  file: string;
  config: Config;
  /** Values that came from the environment or are tokens: never to be printed or logged. */
  secrets: string[];
  /** `file:line:col` of a key path in the file (its nearest existing ancestor), for problems found after loading. */
  locate?: (path: (string | number)[]) => string;
  /** The file holds no settings at all (nothing, or only comments): every value is a default. */
  empty?: true;
}

/** Reads and validates a config file. Throws ConfigError naming file:line:col and the key path. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "file not found" : code === "EACCES" ? "permission denied: this user may not read it" : String(err);
    throw new ConfigError([{ file, line: 1, col: 1, path: "", message: reason }]);
  }
  return parseConfig(text, file, env);
}

/** Parses config text; relative paths in it are resolved against the file's directory. */
export function parseConfig(text: string, file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number, path: string, message: string): ConfigProblem => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, col, path, message };
  };
  if (doc.errors.length > 0) {
    throw new ConfigError(doc.errors.map((e) => at(e.pos[0], "", yamlMessage(e))));
  }
  const { secrets, unset, reread } = substituteEnv(doc, env);
  if (unset.length > 0) {
    throw new ConfigError(
      unset.map((u) => at(u.offset, u.path, `\${${u.name}} is not set in the environment (write \${${u.name}:-} to allow it empty)`)),
    );
  }
  const raw = doc.contents === null ? {} : toJs(doc, at);
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new ConfigError([at(0, "", "expected a mapping of settings at the top level")]);
  }
  const parsed = configSchema().safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => locateIssue(doc, issue, at, reread)));
  }
  const config = resolvePaths(parsed.data, dirname(resolve(file)));
  const locate = (path: (string | number)[]) => {
    const { line, col } = lineCounter.linePos(deepestNode(doc, path).node?.range?.[0] ?? 0);
    return `${file}:${line}:${col}`;
  };
  const secretValues = [...secrets, ...tokensOf(config), ...urlSecretsDeep(config)].filter((s) => s.length >= 4);
  return { file, config, secrets: secretValues, locate, ...(doc.contents === null && { empty: true as const }) };
}

/** The parser's message, in the owner's terms where the parser speaks to a programmer. */
function yamlMessage(e: YAMLError): string {
  if (e.code === "MULTIPLE_DOCS")
    return "a second YAML document starts here; hermes.yaml is one YAML document: remove this '---' line (and merge what follows into the settings above)";
  return e.message.split("\n")[0] ?? e.message;
}

/** The document as plain data; a YAML-level error (say, an alias without its anchor) becomes a ConfigError. */
function toJs(doc: Document, at: (offset: number, path: string, message: string) => ConfigProblem): unknown {
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    let offset = 0;
    visit(doc, {
      Alias(_key, node) {
        offset = node.range?.[0] ?? 0;
        return visit.BREAK;
      },
    });
    throw new ConfigError([at(offset, "", (err as Error).message)]);
  }
}

/** Replaces ${VAR} and ${VAR:-default} in scalar values; an unquoted result is re-read as YAML (numbers, booleans). */
function substituteEnv(doc: Document, env: NodeJS.ProcessEnv) {
  const secrets: string[] = [];
  const unset: { name: string; offset: number; path: string }[] = [];
  /** Nodes whose substituted text was re-read as a number, boolean or null, with the text the file has. */
  const reread = new WeakMap<Node, string>();
  visit(doc, {
    Scalar(key, node, ancestors) {
      if (typeof node.value !== "string" || !node.value.includes("${")) return;
      const onUnset = (name: string) => unset.push({ name, offset: node.range?.[0] ?? 0, path: keyPath(ancestors, key, node) });
      const replaced = substituteEnvRefs(node.value, env, (value) => secrets.push(value), onUnset);
      const written = node.value;
      node.value = node.type === Scalar.PLAIN ? reparseScalar(replaced) : replaced;
      if (typeof node.value !== "string") reread.set(node, written);
    },
  });
  return { secrets, unset, reread };
}

/** The dotted key path of a node from the visitor's ancestors (`connectors.telegram.token`, `tools.enabled.1`). */
function keyPath(ancestors: readonly unknown[], key: number | "key" | "value" | null, node: Node): string {
  const parts: (string | number)[] = [];
  const chain = [...ancestors, node];
  chain.forEach((item, i) => {
    if (isPair(item) && isScalar(item.key)) parts.push(String(item.key.value));
    if (isSeq(item)) parts.push(item.items.indexOf(chain[i + 1] as never));
  });
  if (key === "key") parts.pop();
  return parts.join(".");
}

/**
 * A substituted value is read as YAML only when the whole of it is one plain scalar that is not text (a number,
 * a boolean); anything else stays the text as it came: re-read, a password with ` #` in it lost the rest as a
 * comment, and one in quotes lost its quotes.
 */
function reparseScalar(text: string): unknown {
  if (text === "") return "";
  const doc = parseDocument(text);
  if (doc.errors.length > 0 || !isScalar(doc.contents)) return text;
  const { value, range } = doc.contents;
  // Spaces or a line break around it (`PORT=8080 ` in an env file, a value read from a file) are no part of it.
  const whole = range !== undefined && text.slice(range[0], range[1]) === text.trim();
  return whole && (value === null || typeof value === "number" || typeof value === "boolean") ? value : text;
}

type At = (offset: number, path: string, message: string) => ConfigProblem;

function locateIssue(doc: Document, issue: z.core.$ZodIssue, at: At, reread: WeakMap<Node, string>): ConfigProblem {
  const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0] ?? "";
    const node = findKeyNode(doc, path, key);
    const full = [...path, key].join(".");
    const known = knownKeysHint(issue);
    return at(node?.range?.[0] ?? 0, full, `unknown key '${key}'${known}`);
  }
  // A key the file does not have is located at its nearest parent that it does have.
  const { node, depth } = deepestNode(doc, path);
  const offset = node?.range?.[0] ?? 0;
  const absent = depth < path.length;
  // Only a type check fails for want of the key; any other issue (a check the schema wrote, such as "telegram
  // is enabled but has no token") says more than "missing" would, so its own message is kept.
  if (absent && issue.code === "invalid_type") {
    const key = String(path[path.length - 1]);
    return at(offset, path.join("."), `missing required key '${key}' (expected ${issue.expected})`);
  }
  const message = describeIssue(issue, !absent && isScalar(node) ? node.value : undefined);
  // A value from the environment that is all digits (a PIN, a password) is read as a number, and "0123" as 123.
  const written = !absent && node && issue.code === "invalid_type" && issue.expected === "string" ? reread.get(node) : undefined;
  if (written !== undefined) return at(offset, path.join("."), `${message}: write it in quotes, "${written}", to keep its value as text`);
  return at(offset, path.join("."), message);
}

function knownKeysHint(issue: z.core.$ZodIssue): string {
  return issue.path.length === 0 ? " (see config/hermes.schema.json for the keys)" : "";
}

function describeIssue(issue: z.core.$ZodIssue, value: unknown): string {
  if (issue.code === "invalid_key" && issue.issues[0]) return `invalid key: ${issue.issues[0].message}`;
  if (issue.code === "invalid_value" && issue.values.length > 1) {
    return `unknown value ${JSON.stringify(value)}; expected one of ${issue.values.join(", ")}`;
  }
  return issue.message.replace(/^Invalid input: /, "");
}

function findKeyNode(doc: Document, path: (string | number)[], key: string): Node | undefined {
  const parent = resolved(doc, nodeAt(doc, path));
  if (!isMap(parent)) return undefined;
  const pair = parent.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === key);
  return pair && isScalar(pair.key) ? pair.key : undefined;
}

function deepestNode(doc: Document, path: (string | number)[]): { node: Node | undefined; depth: number } {
  for (let depth = path.length; depth > 0; depth--) {
    const node = nodeAt(doc, path.slice(0, depth));
    if (node && typeof node === "object" && "range" in node) return { node, depth };
  }
  return { node: (doc.contents as Node | null) ?? undefined, depth: 0 };
}

/**
 * The node at a key path, through aliases (`- *brief`): a problem in an aliased map is in the anchor's text,
 * where `getIn` would stop at the alias and call a key the anchor has missing.
 */
function nodeAt(doc: Document, path: (string | number)[]): Node | undefined {
  let node: unknown = doc.contents;
  for (const key of path) {
    node = resolved(doc, node);
    if (!isMap(node) && !isSeq(node)) return undefined;
    node = node.get(key, true);
  }
  return (node as Node | undefined) ?? undefined;
}

function resolved(doc: Document, node: unknown): unknown {
  return isAlias(node) ? node.resolve(doc) : node;
}

/** Paths in the file: `~/…` is in the home of the user hermes runs as, a relative one is against the file's folder. */
function resolvePaths(config: Config, base: string): Config {
  const abs = (p: string) => (p === "~" || p.startsWith("~/") ? join(homeDir(), p.slice(1)) : isAbsolute(p) ? p : resolve(base, p));
  return {
    ...config,
    storage: {
      ...config.storage,
      path: abs(config.storage.path),
      ...(config.storage.backup && { backup: { ...config.storage.backup, dir: abs(config.storage.backup.dir) } }),
    },
    tools: {
      ...config.tools,
      files: { ...config.tools.files, root: abs(config.tools.files.root) },
      calendar: { ...config.tools.calendar, sources: config.tools.calendar.sources.map((s) => (/^https?:\/\//.test(s) ? s : abs(s))) },
    },
    connectors: { ...config.connectors, cli: { ...config.connectors.cli, socket: abs(config.connectors.cli.socket) } },
    skills: { ...config.skills, dirs: config.skills.dirs.map(abs) },
    mcp: { servers: Object.fromEntries(Object.entries(config.mcp.servers).map(([n, s]) => [n, s.cwd ? { ...s, cwd: abs(s.cwd) } : s])) },
  };
}

function homeDir(): string {
  return process.env.HOME || homedir();
}

function tokensOf(config: Config): string[] {
  const { telegram, discord, http, email, plugins } = config.connectors;
  const mcp = Object.values(config.mcp.servers).flatMap((s) => [...Object.values(s.headers), ...Object.values(s.env)]);
  return [
    telegram.token,
    discord.token,
    config.model.api_key,
    ...config.model.fallbacks.map((f) => f.api_key),
    http.token,
    config.speech?.api_key ?? "",
    ...http.hooks.map((h) => h.secret),
    ...mcp.map(bearerToken),
    email.imap.pass,
    email.smtp.pass,
    ...plugins.flatMap((p) => secretOptionValues(p.options)),
  ];
}

/** `Bearer abc…` is masked as its token too, so a log line that holds only the token is covered. */
function bearerToken(value: string): string {
  return value.replace(/^(Bearer|Basic|Token)\s+/i, "");
}

/**
 * The effective config with tokens, keys and the secrets inside URLs masked, for `hermes config check`;
 * in plugins' options (which only the plugin understands), also every one of `secrets` (the loader's: the
 * values `${VAR}`s brought in among them) wherever it stands.
 */
export function maskSecrets(config: Config, secrets: readonly string[] = []): Config {
  return maskUrlsDeep(maskTokens(config, secrets));
}

function maskTokens(config: Config, secrets: readonly string[]): Config {
  const mask = (s: string) => (s ? "********" : "");
  const { telegram, discord, http, email } = config.connectors;
  const maskAll = (values: Record<string, string>) => Object.fromEntries(Object.keys(values).map((k) => [k, mask(values[k] ?? "")]));
  const servers = Object.entries(config.mcp.servers).map(([n, s]) => [
    n,
    { ...s, args: maskArgs(s.args, secrets), headers: maskAll(s.headers), env: maskAll(s.env) },
  ]);
  return {
    ...config,
    mcp: { servers: Object.fromEntries(servers) },
    model: {
      ...config.model,
      api_key: mask(config.model.api_key),
      fallbacks: config.model.fallbacks.map((f) => ({ ...f, api_key: mask(f.api_key) })),
    },
    ...(config.speech && { speech: { ...config.speech, api_key: mask(config.speech.api_key) } }),
    connectors: {
      ...config.connectors,
      telegram: { ...telegram, token: mask(telegram.token) },
      plugins: config.connectors.plugins.map((p) => ({ ...p, options: maskOptions(p.options, secrets) as Record<string, unknown> })),
      discord: { ...discord, token: mask(discord.token) },
      http: { ...http, token: mask(http.token), hooks: http.hooks.map((h) => ({ ...h, secret: mask(h.secret) })) },
      email: { ...email, imap: { ...email.imap, pass: mask(email.imap.pass) }, smtp: { ...email.smtp, pass: mask(email.smtp.pass) } },
    },
  };
}

/**
 * Plugin options, at any depth: a text whose own name says it holds a secret (token, password, key…), or
 * a list's item under such a name, is masked whole, like the built-in tokens; any other text has each of
 * `secrets` in it masked. A map under such a name (`auth: { type, user, password }`) is read key by key.
 */
function maskOptions(value: unknown, secrets: readonly string[], secretName = false): unknown {
  if (typeof value === "string") {
    if (!value) return value;
    if (secretName) return "********";
    return secrets.reduce((text, secret) => (secret && text.includes(secret) ? text.replaceAll(secret, "********") : text), value);
  }
  if (Array.isArray(value)) return value.map((v) => maskOptions(v, secrets, secretName));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskOptions(v, secrets, SECRET_OPTION.test(k))]));
  return value;
}

/** The texts of plugin options that maskOptions masks whole: scrubbed from the log. */
function secretOptionValues(value: unknown, secretName = false): string[] {
  if (typeof value === "string") return secretName && value ? [value] : [];
  if (Array.isArray(value)) return value.flatMap((v) => secretOptionValues(v, secretName));
  if (value && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => secretOptionValues(v, SECRET_OPTION.test(k)));
  return [];
}

/** The names of plugin options that hold a secret: masked in `config check`, scrubbed from the log. */
const SECRET_OPTION = /token|secret|pass|key|auth|credential/i;
