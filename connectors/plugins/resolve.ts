import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

/** A plugin module found on disk: the file to import, the version of the package it belongs to and that package's folder. */
export interface FoundModule {
  file: string;
  version: string;
  /** The folder of the package holding `file` (undefined for a loose file outside any package). */
  root?: string;
}

/** What `fromDir` is, in a fix's words: hermes.yaml's folder for the daemon, the current folder for the kit. */
export interface ModuleBase {
  /** "a relative one counts from …" */
  folder: string;
  /** "install it … (npm install x)" */
  install: string;
}

const CONFIG_FOLDER: ModuleBase = { folder: "hermes.yaml's folder", install: "next to hermes.yaml" };

/**
 * Finds `module`: a path (relative to `fromDir`, hermes.yaml's folder unless `base` says otherwise) or a package
 * name looked up in node_modules from `fromDir` upwards. A path to a folder is read as a package: its
 * package.json's entry, else its index.js.
 */
export function findModule(module: string, fromDir: string, base = CONFIG_FOLDER): FoundModule | { problem: string; fix: string } {
  if (isAbsolute(module) || /^\.\.?(\/|$)/.test(module)) {
    const file = resolve(fromDir, module);
    const info = statOf(file);
    if (!info) return { problem: `no file ${file}`, fix: `correct the path; a relative one counts from ${base.folder}` };
    if (info.isDirectory()) return inPackage(file, `the folder ${file}`, "build the plugin, or give the path of its entry file");
    const near = packageNear(dirname(file));
    return { file, version: near?.version ?? "-", ...(near && { root: near.dir }) };
  }
  const dir = packageDir(module, fromDir);
  if (!dir) {
    return {
      problem: `no package '${module}' in node_modules`,
      fix: `install it ${base.install} (npm install ${module}), or give a path such as ./plugins/x.mjs`,
    };
  }
  return inPackage(dir, `package '${module}'`, "build or reinstall the package");
}

/** The entry of the package in `dir` (index.js when it has no package.json), as `import` would pick it. */
function inPackage(dir: string, what: string, fix: string): FoundModule | { problem: string; fix: string } {
  const manifest = join(dir, "package.json");
  const pkg = readJson(manifest);
  const entry = entryOf(pkg);
  const file = join(dir, entry);
  if (!statOf(file)?.isFile()) {
    const problem = existsSync(manifest) ? `names ${entry} as its entry, which does not exist` : "has no package.json and no index.js";
    return { problem: `${what} ${problem}`, fix };
  }
  return { file, version: typeof pkg.version === "string" ? pkg.version : "-", root: dir };
}

/** The file's status, or undefined when there is none. */
const statOf = (path: string) => statSync(path, { throwIfNoEntry: false });

function packageDir(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The file a package's `import` resolves to: its `exports` for ".", else `main`, else index.js. */
function entryOf(pkg: Record<string, unknown>): string {
  const pick = (e: unknown): string | undefined => {
    if (typeof e === "string") return e;
    if (!e || typeof e !== "object") return undefined;
    const o = e as Record<string, unknown>;
    if ("." in o) return pick(o["."]);
    return pick(o.import) ?? pick(o.node) ?? pick(o.default) ?? pick(o.require);
  };
  return pick(pkg.exports) ?? (typeof pkg.main === "string" ? pkg.main : "index.js");
}

/** The nearest package.json at or above `dir`: its folder and version ("-" when it has none). */
function packageNear(dir: string): { dir: string; version: string } | undefined {
  for (let d = dir; ; d = dirname(d)) {
    const file = join(d, "package.json");
    if (existsSync(file)) {
      const version = readJson(file).version;
      return { dir: d, version: typeof version === "string" ? version : "-" };
    }
    if (dirname(d) === d) return undefined;
  }
}

function readJson(file: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(readFileSync(file, "utf8"));
    return value && typeof value === "object" ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
