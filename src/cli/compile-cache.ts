import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import type Module from "node:module";
import { basename, join, sep } from "node:path";
import type { Script } from "node:vm";

/**
 * V8's code cache for the bundled command, so a start does not parse and compile ~1 MB of JavaScript
 * again (start to READY on Node 20: ~160 → ~127 ms). The bundle's larger CommonJS chunks are compiled
 * through `vm.Script` with the cached data of an earlier run, on every Node: the chunks' file names carry
 * a hash of their content, so an entry can only belong to the code it was made from, and V8 rejects data
 * from another V8 version or other flags. Node 22+ also keeps its own cache (`module.enableCompileCache`)
 * for the rest: the small chunks, the packages left outside the bundle and plugins' ES modules. Node's
 * entries are made when a module is compiled, so they hold its top level only, and every function a start
 * runs is compiled again at its first call; hermes' entries are made after the start and hold those
 * functions too (Node 24, the daemon with a plugin, skills and the API: ~142 ms to READY with Node's cache
 * alone, ~126 ms with both). A missing or rejected entry, or one another command made that holds much
 * less than a daemon's start compiled, is written with every function compiled until then: by the daemon a
 * second after READY (`flushCompileCache`), so that it holds what a start runs, by `config check`, `doctor`,
 * `backup` and `export` when they exit.
 *
 * The cache holds code, so it lives only in a directory of this user that nobody else can write:
 * systemd's `CacheDirectory=` ($CACHE_DIRECTORY), else `$XDG_CACHE_HOME/hermes` or `~/.cache/hermes`;
 * Node's own entries go in a folder of it that nobody else can enter (`node/`, else Node's cache stays off).
 * `HERMES_COMPILE_CACHE=off` turns it off. Without a usable directory the command runs uncached.
 *
 * Each build of the bundle has a folder of its own in `compile-cache/` (`build-` and a hash of its chunks'
 * names, which carry their contents' hashes), Node's entries included: an upgrade starts a new folder,
 * and the daemon removes the folders of other builds once they have gone unused for a week
 * (`pruneCompileCache` in compile-cache-sweep.ts), so the cache does not grow by a build's entries at every upgrade.
 */
export interface CompileCacheReport {
  dir: string;
  /** "vm": hermes' own entries for the bundle's larger chunks; "node": Node's cache only (not the bundle). */
  mode: "node" | "vm";
  /** Node's own cache is on too, for everything else (Node 22+). */
  node: boolean;
  /** Chunks compiled from cached data, and chunks compiled afresh (written at exit), this process. */
  hits: number;
  misses: number;
}

const REPORT = Symbol.for("hermes.compileCache");

/** Node 22+ passes the module's format too ('module', 'commonjs-typescript', …), by which it strips a TypeScript plugin's types. */
type Compile = (this: Module, content: string, filename: string, ...rest: unknown[]) => unknown;

/** What node:module has of Node's own cache (22+). */
interface NodeCache {
  enableCompileCache?: (dir: string) => { status: number };
  constants?: { compileCacheStatus?: { ENABLED: number; ALREADY_ENABLED: number } };
}

/** node:module, loaded by the commands that use the cache (it brings Node's ES module loader along). */
const nodeModule = () => process.getBuiltinModule("node:module");

/** What the cache uses of node:module beyond its public API: the loader's own module class, as Node 20–24 have it. */
interface Loader {
  new (id: string, parent: Module): Module & { paths: string[]; loaded: boolean; _compile: Compile };
  prototype: { _compile: Compile };
  _cache: Record<string, Module | undefined>;
  _resolveFilename: (request: string, parent: Module, isMain: boolean, options?: unknown) => string;
  wrap: (script: string) => string;
}

const loaderOf = () => nodeModule() as unknown as Loader;

/** Turns the cache on for what this process loads next (the commands that run the daemon's code). */
export function useCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  if (env.HERMES_COMPILE_CACHE === "off" || typeof process.getBuiltinModule !== "function") return; // Node 20.16+
  const base = cacheDir(env);
  if (!base) return;
  // This code runs from a chunk in the bundle's folder of chunks, or from the entry beside that folder.
  const root = typeof __dirname !== "string" ? undefined : basename(__dirname) === "chunks" ? __dirname : join(__dirname, "chunks");
  const dir = closedDir(join(base, root ? buildName(root) : MODULES), 0o022);
  if (!dir) return;
  const builtIn = enableNodeCache(nodeModule() as NodeCache, dir);
  if (!root) {
    if (builtIn) publish({ dir, mode: "node", node: true, hits: 0, misses: 0 }); // not the bundle
    return;
  }
  hookCompile(dir, root, builtIn);
}

/** The folder of hermes run from its modules (not the bundle): Node's own cache only. */
const MODULES = "modules";

/**
 * The build's folder: a hash of the chunks' names (FNV-1a; node:crypto would cost a start ~1 ms to load).
 * A chunk's name carries a hash of its content, so any change to the bundle gives a new folder.
 */
function buildName(root: string): string {
  let hash = 0x811c9dc5;
  for (const name of readdirSync(root).sort()) {
    for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193);
    hash = Math.imul(hash ^ 0x2f, 0x01000193);
  }
  return `build-${(hash >>> 0).toString(16).padStart(8, "0")}`;
}

/**
 * Node's own cache (22+), in `dir`'s folder `node/`: Node makes its entries' folders with the process's
 * umask, so they go in a folder only this user can enter. False where Node has none or it is not on.
 */
function enableNodeCache(node: NodeCache, dir: string): boolean {
  if (!node.enableCompileCache) return false;
  const nodeDir = closedDir(join(dir, "node"), 0o077);
  if (!nodeDir) return false;
  const { status } = node.enableCompileCache(nodeDir);
  const known = node.constants?.compileCacheStatus;
  return !known || status === known.ENABLED || status === known.ALREADY_ENABLED;
}

/** What a flush did with hermes' entries: entries written, and entries read at the start that were made again to compare. */
export interface FlushReport {
  written: number;
  checked: number;
}

let flushVm: (() => FlushReport) | undefined;

/** Writes the entries of what was compiled so far now, instead of at exit. */
export function flushCompileCache(): FlushReport | undefined {
  if (compileCacheReport()?.node) (nodeModule() as { flushCompileCache?: () => void }).flushCompileCache?.();
  return flushVm?.();
}

/** What the cache did in this process, for the daemon's start-up log; undefined when it is off. */
export function compileCacheReport(): CompileCacheReport | undefined {
  return (globalThis as Record<symbol, CompileCacheReport | undefined>)[REPORT];
}

function publish(report: CompileCacheReport): CompileCacheReport {
  (globalThis as Record<symbol, CompileCacheReport>)[REPORT] = report;
  return report;
}

function cacheDir(env: NodeJS.ProcessEnv): string | undefined {
  try {
    const home = env.HOME || process.getBuiltinModule?.("node:os").homedir();
    const base = env.CACHE_DIRECTORY?.split(":")[0] || env.XDG_CACHE_HOME || (home && join(home, ".cache"));
    if (!base) return undefined;
    const dir = env.CACHE_DIRECTORY ? join(base, "compile-cache") : join(base, "hermes", "compile-cache");
    return ownDir(dir, 0o022);
  } catch {
    // No home directory, or one that cannot be written: the command runs uncached.
    return undefined;
  }
}

/** `dir`, made when missing, if this user owns it and none of the `others` mode bits are set on it. */
function ownDir(dir: string, others: number): string | undefined {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = statSync(dir);
  const mine = typeof process.getuid !== "function" || st.uid === process.getuid();
  return mine && (st.mode & others) === 0 ? dir : undefined;
}

/** `dir` if this user owns it and none of the `others` mode bits are set (made so when missing); undefined otherwise. */
function closedDir(dir: string, others: number): string | undefined {
  try {
    return ownDir(dir, others);
  } catch {
    return undefined;
  }
}

/**
 * Chunks smaller than this compile as Node does: a few lines, whose entry would cost as much to read as
 * it saves. From 2 KiB on, a chunk's entry pays: with the chunks of 2–32 KiB cached too, a start on Node
 * 20 took ~4–6 ms less (nine starts, four interleaved rounds); on Node 24 Node's own cache had them already.
 */
const MIN_CACHED_CHARS = 2 * 1024;

/**
 * A dynamic `import()` in a chunk (of a plugin's or a skill's module), also one in a string the chunk turns
 * into code with `new Function`, as the plugin resolver does: on Node 20 a script compiled from cached
 * data loses its dynamic-import hook, so the import would fail on every start after the first (Node 22+
 * keeps it). Such a chunk compiles as Node does, on every Node.
 */
const DYNAMIC_IMPORT = /(?<![\w$.])import\(/;
const importsDynamically = (content: string) => content.includes("import(") && DYNAMIC_IMPORT.test(content);

/**
 * Compiles the larger chunks under `root` with cached data; everything else as Node does (with its cache
 * when `node`). The hook runs for every module the process loads, whose path Node's own loader already
 * walks through node:path's `normalizeString` a few times: a `dirname`, `basename` and `join` more per
 * chunk took that loop past the count at which V8 hands a function to its optimizing compiler, TurboFan,
 * whose own code then stayed mapped (Node 24, with a plugin, skills and the OpenAI API configured: ~5 MB of
 * an idle daemon's ~68 here; the daemon without them stayed just under the count). So the hook finds a
 * chunk's folder and name with string operations.
 */
function hookCompile(dir: string, root: string, node: boolean): void {
  const report = publish({ dir, mode: "vm", node, hits: 0, misses: 0 });
  const loader = loaderOf();
  const proto = loader.prototype;
  const original = proto._compile;
  /** Every chunk compiled here, with the size of the entry it was given (0: none, or rejected). */
  const compiled: { script: Script; file: string; had: number }[] = [];
  let tag: string | undefined;
  proto._compile = function (this: Module, content: string, filename: string, ...rest: unknown[]) {
    // String operations, not node:path: see above.
    const slash = filename.lastIndexOf(sep);
    if (content.length < MIN_CACHED_CHARS || slash !== root.length || !filename.startsWith(root)) {
      return original.call(this, content, filename, ...rest);
    }
    // V8's version, flags and CPU features: a daemon started with other flags than the CLI keeps its own entries.
    tag ??= `${process.version}-${process.arch}-${process.getBuiltinModule("node:v8").cachedDataVersionTag()}`;
    const name = filename.endsWith(".js") ? filename.slice(slash + 1, -3) : filename.slice(slash + 1);
    const file = `${dir}${sep}${name}-${tag}.cache`;
    const cachedData = readCache(file);
    // Only a chunk that passed this check ever gets an entry, named by its content's hash: with one, no scan.
    if (!cachedData && importsDynamically(content)) return original.call(this, content, filename, ...rest);
    const vm = process.getBuiltinModule("node:vm");
    const source = loader.wrap(content.startsWith("#!") ? `//${content}` : content);
    const script = new vm.Script(source, {
      filename,
      cachedData,
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    const hit = cachedData !== undefined && !script.cachedDataRejected;
    if (hit) report.hits++;
    else report.misses++;
    compiled.push({ script, file, had: hit ? cachedData.length : 0 });
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return wrapper.call(this.exports, this.exports, requireFor(this, root), this, filename, root);
  };
  // Missing entries are written at exit (a one-off command's); the daemon's flush after READY also makes
  // again an entry another command made, and replaces it when this start compiled a quarter more of it.
  // `sizes` gets the size each entry has after the pass.
  const write = (settled: (file: string, had: number) => boolean, sizes = new Map<string, number>()): FlushReport => {
    const report = { written: 0, checked: 0 };
    for (const { script, file, had } of compiled.splice(0)) {
      sizes.set(file, had);
      if (had && settled(file, had)) continue;
      if (had) report.checked++;
      const data = script.createCachedData();
      if (data.length <= had * 1.25) continue;
      writeCache(file, data);
      sizes.set(file, data.length);
      report.written++;
    }
    return report;
  };
  // Making an entry again only to compare took a start's ~1.2 MB of entries through malloc a second after
  // READY, memory the allocator kept (~0.5 MB of an idle daemon on Node 24), at every start. So the build's
  // folder records, per V8 tag, each entry a daemon's flush wrote or compared, with its size then: a later
  // daemon compares only an entry the record does not hold at the size it read (another command made it
  // or wrote it since, or this config loads its chunk for the first time).
  flushVm = () => {
    if (!tag) return write(() => false);
    const record = `${dir}${sep}daemon-${tag}.chunks`;
    const suffix = `-${tag}.cache`;
    const known = readRecord(record, suffix);
    const sizes = new Map<string, number>();
    const name = (file: string) => file.slice(dir.length + 1);
    const report = write((file, had) => known.get(name(file)) === had, sizes);
    let changed = false;
    for (const [file, size] of sizes) {
      if (size > 0 && known.get(name(file)) !== size) {
        known.set(name(file), size);
        changed = true;
      }
    }
    if (changed) writeCache(record, Buffer.from([...known].map(([entry, size]) => `${entry} ${size}\n`).join("")));
    return report;
  };
  process.once("exit", () => write(() => true));
}

/** A record's entries of this tag (`suffix`) and their sizes, a line each ("name size"); empty when it cannot be read. */
function readRecord(file: string, suffix: string): Map<string, number> {
  const entries = new Map<string, number>();
  for (const line of readCache(file)?.toString().split("\n") ?? []) {
    const [entry, size] = line.split(" ");
    if (entry?.endsWith(suffix) && /^\d+$/.test(size ?? "")) entries.set(entry, Number(size));
  }
  return entries;
}

function requireFor(module: Module, root: string): NodeJS.Require {
  const internals = loaderOf();
  const require = ((id: string) =>
    isSibling(id) ? loadSibling(module, `${root}${sep}${id.slice(2)}`) : module.require(id)) as NodeJS.Require;
  require.resolve = ((request: string, options?: unknown) =>
    internals._resolveFilename(request, module, false, options)) as NodeJS.RequireResolve;
  require.cache = internals._cache as NodeJS.Require["cache"];
  require.main = process.mainModule;
  return require;
}

/** `./name.js`: another chunk of the bundle, as the bundler writes its requires. */
const isSibling = (id: string) => id.startsWith("./") && id.endsWith(".js") && id.indexOf("/", 2) < 0;

/**
 * A chunk's require of another chunk, loaded as Node's loader would but without its resolution: the file is
 * known (`filename`, in the folder of the chunk that asks, whose path Node has made real already), and
 * Node's search for it cost a start ~50 resolutions, each a few stat and realpath calls and four passes
 * through node:path (~7 ms of a ~250 ms start here). The chunk is registered in Node's module cache under
 * the name Node would give it, so a later `require` by Node's own loader finds the same module.
 */
function loadSibling(parent: Module, filename: string): unknown {
  const loader = loaderOf();
  const cached = loader._cache[filename];
  if (cached) return cached.exports;
  const child = new loader(filename, parent);
  child.filename = filename;
  child.paths = parent.paths.slice();
  loader._cache[filename] = child;
  let loaded = false;
  try {
    child._compile(readFileSync(filename, "utf8"), filename, "commonjs");
    loaded = true;
  } finally {
    if (!loaded) {
      delete loader._cache[filename];
      const at = parent.children?.indexOf(child) ?? -1;
      if (at >= 0) parent.children?.splice(at, 1);
    }
  }
  child.loaded = true;
  return child.exports;
}

function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Written aside and renamed, so a second hermes starting meanwhile reads a whole entry or none. */
function writeCache(file: string, data: Buffer): void {
  const aside = `${file}.${process.pid}`;
  try {
    writeFileSync(aside, data, { mode: 0o600 });
    renameSync(aside, file);
  } catch {
    // A full disk or a read-only cache: the next start compiles afresh.
    try {
      rmSync(aside, { force: true });
    } catch {
      // nothing was written
    }
  }
}
