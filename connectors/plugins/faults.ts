/**
 * Which plugin an error nobody caught came from: a throw in a plugin's own timer or event handler, or a
 * rejection of a promise it never awaited, reaches the process's handlers, not the connector around it.
 * Each loaded plugin is watched by where its code lives; an error with a frame in those files is the
 * plugin's. An error whose stack names no file of a plugin (a socket it made without an 'error' listener:
 * only Node's frames; a thrown string: no stack) is the plugin's when it escaped from work the plugin
 * started: hermes calls each plugin inside an async context of its own (`asPlugin`), which its timers,
 * sockets and promises carry. Small and free of imports beyond Node's, because the process handlers ask it
 * before anything loads.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { realpathSync } from "node:fs";
import { sep } from "node:path";
import { fileURLToPath } from "node:url";

/** How the error reached the process. */
export type Escape = "uncaught error" | "unhandled rejection";

interface Watched {
  name: string;
  /** A folder (ends with the path separator) or one file. */
  scope: string;
  fail(how: Escape, err: unknown): void;
  /** Stopped: what still escapes its leftover work is only noted (see retirePlugin). */
  retired?: boolean;
}

/** How many stopped instances of one entry stay blamable for what their leftover work throws. */
const RETIRED_KEPT = 3;

/**
 * Keyed by entry name, scope and instance: a plugin made again by a reload is watched beside its old self,
 * whose leftover work (a timer it set) is blamed on it (stopped: it ignores that), not on the new one.
 */
const watched = new Map<string, Watched>();
let instances = 0;

/**
 * Watches a plugin's code: the folder of its package (`root`), or only `file` when it is no package's or
 * when the package also holds the running hermes (a plugin file kept inside hermes's own tree).
 */
export function watchPlugin(name: string, code: { file: string; root?: string }, fail: Watched["fail"]): string | undefined {
  if (!code.file) return undefined;
  const file = real(code.file);
  const root = code.root ? real(code.root) + sep : undefined;
  const scope = root && !HERMES_FILES.some((f) => f.startsWith(root)) ? root : file;
  const key = `${name}\0${scope}\0${++instances}`;
  watched.set(key, { name, scope, fail });
  return key;
}

/**
 * A stopped instance: its watch keeps only a note to `log` (no connector, no plugin: the closure is made
 * here, from what is passed), so what its leftover timers throw is still its own and not the live
 * instance's; the oldest retired watches of the entry go.
 */
export function retirePlugin(key: string | undefined, log: { warn(obj: object, msg: string): void }, module: string): void {
  const w = key === undefined ? undefined : watched.get(key);
  if (!w || !key) return;
  const { name, scope } = w;
  const note = (how: Escape, err: unknown) =>
    log.warn({ err, plugin: name, module }, `plugin ${name} (stopped) raised another ${how}; ignored`);
  watched.set(key, { name, scope, fail: note, retired: true });
  const retired = [...watched].filter(([, v]) => v.retired && v.name === w.name);
  for (const [old] of retired.slice(0, -RETIRED_KEPT)) watched.delete(old);
}

/** The keys watched now (for the tests: stopped instances do not pile up). */
export function watchedKeys(): string[] {
  return [...watched.keys()];
}

/** Whose work runs now: the key of a watched plugin, inside `asPlugin`. Made by the first plugin call. */
let running: AsyncLocalStorage<string> | undefined;

/**
 * Runs `call` (a plugin's create, start, send, edit or stop) as the plugin's own work: what it starts
 * carries the plugin's key, so an error escaping from there is blamed on it. `key` from `watchPlugin`.
 */
export function asPlugin<T>(key: string | undefined, call: () => T): T {
  if (!key) return call();
  running ??= new AsyncLocalStorage();
  return running.run(key, call);
}

/** Runs `call` (hermes' side of a plugin's call into the host) as hermes' own work again. */
export function asHermes<T>(call: () => T): T {
  return running ? running.exit(call) : call();
}

/**
 * Hands `err` to the plugin it escaped from and returns true; false when none can be named. The work it
 * escaped from decides first (the process handler runs in its async context): that tells apart two
 * entries of one module and an instance from the one a reload made in its place. Else the nearest frame
 * of a watched plugin's file on its stack; plugins sharing that file are all told.
 */
export function blamePlugin(how: Escape, err: unknown): boolean {
  if (watched.size === 0) return false;
  const owner = watched.get(running?.getStore() ?? "");
  if (owner) {
    owner.fail(how, err);
    return true;
  }
  for (const file of stackFiles(err)) {
    const owners = [...watched.values()].filter((w) => (w.scope.endsWith(sep) ? file.startsWith(w.scope) : file === w.scope));
    if (!owners.length) continue;
    const closest = Math.max(...owners.map((w) => w.scope.length));
    const nearest = owners.filter((w) => w.scope.length === closest);
    // A live instance before the stopped ones of its file (only one of those, the newest, when none is live).
    const live = nearest.filter((w) => !w.retired);
    for (const w of live.length ? live : nearest.slice(-1)) w.fail(how, err);
    return true;
  }
  return false;
}

/** The files of an error's stack frames, nearest first: paths and file:// URLs, without line, column or query. */
export function stackFiles(err: unknown): string[] {
  const stack = err instanceof Error && typeof err.stack === "string" ? err.stack : "";
  const files: string[] = [];
  for (const line of stack.split("\n")) {
    const at = /^\s*at (?:.*?\()?(.+?):\d+:\d+\)?\s*$/.exec(line)?.[1];
    if (!at) continue;
    const path = at.replace(/[?#].*$/, "");
    if (path.startsWith("file://")) files.push(fileURLToPath(path));
    else if (path.startsWith("/")) files.push(path);
  }
  return files;
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** This file (in the bundle: the chunk holding it), as stacks name it: never part of a plugin's scope. */
const HERMES_FILES = stackFiles(new Error("where hermes runs from")).slice(0, 1);
