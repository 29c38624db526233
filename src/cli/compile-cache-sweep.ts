// The compile cache's housekeeping: the daemon marks its build's folder in use and removes what no start
// of this build reads (other builds' folders, entries for another Node, entries left half-written).
import { readdirSync, rmSync, statSync, utimesSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { compileCacheReport } from "./compile-cache.js";

/** A folder of another build, or Node's entries for another Node, is removed once unused this long. */
const UNUSED_MS = 7 * 24 * 3600 * 1000;

/**
 * A start that compiled nothing does not sweep again a build folder marked in use this recently: the
 * week's rule needs no finer mark, and the sweep's work shows in an idle daemon on Node 24 (a few
 * tenths of a MB, within the run-to-run spread).
 */
const SWEPT_MS = 24 * 3600 * 1000;

/**
 * Marks this build's folder as in use, and removes what no start of this build reads: the folders of
 * other builds unused for a week, Node's folders and hermes' entries for another Node version written
 * over a week ago, entries left half-written by a process that died, and the files of the layout before
 * builds had folders. Called by the daemon after its start. Returns how many files and folders went
 * (one that cannot be read or removed is left), or undefined when this start had nothing to sweep: it
 * compiled nothing (the same build on the same Node as before) and the folder was marked within a day.
 */
export function pruneCompileCache(now = Date.now()): number | undefined {
  const report = compileCacheReport();
  const dir = report?.dir;
  if (!dir) return 0;
  if (report.misses === 0 && markedSince(dir, now - SWEPT_MS)) return undefined;
  // The running Node's version as the names hold it after their `v` (20.20.2), for the patterns below.
  const version = process.version.slice(1).replaceAll(".", "\\.");
  const removed =
    // The layout before build folders (now), and the folders of other builds (once unused for a week).
    removeWhere(dirname(dir), /^(?:node|.*\.cache(?:\.\d+)?)$/gm, now, 0) +
    removeWhere(dirname(dir), /^(?:build-[0-9a-f]{8}|modules)$/gm, now, UNUSED_MS, dir) +
    // In this build's folder: entries written aside by a process that died, and entries for another Node.
    removeWhere(dir, /^.*\.(?:cache|chunks)\.\d+$/gm, now, 3600 * 1000) +
    removeWhere(dir, new RegExp(`^.*-v(?!${version}-)\\d+\\.\\d+\\.\\d+-[^-\\n]+-\\d+\\.(?:cache|chunks)$`, "gm"), now, UNUSED_MS) +
    removeWhere(join(dir, "node"), new RegExp(`^v(?!${version}-)\\d+\\.\\d+\\.\\d+-.*$`, "gm"), now, UNUSED_MS);
  try {
    utimesSync(dir, now / 1000, now / 1000);
  } catch {
    // gone meanwhile: the next start makes it again
  }
  return removed;
}

/** Whether `dir` was marked in use (or written to) after `since`. */
function markedSince(dir: string, since: number): boolean {
  try {
    return statSync(dir).mtimeMs > since;
  } catch {
    return false;
  }
}

/**
 * Removes the entries of `dir` whose names `pattern` (global, multiline) matches and that were last changed
 * over `unusedMs` ago, but `keep`; returns how many went. The names are matched as one text, so no function
 * here runs once per entry: at idle, a loop that hot wakes V8's optimizing compiler (~5 MB on Node 24).
 * The paths are put together with string operations, not node:path's `join` (see `hookCompile` in compile-cache.ts): a sweep
 * that looked at ~100 entries (a week of builds, two Nodes) took `normalizeString` to TurboFan, and the
 * daemon started first after an upgrade held ~5 MB more on Node 24 until its next restart.
 */
function removeWhere(dir: string, pattern: RegExp, now: number, unusedMs: number, keep?: string): number {
  let names: string;
  try {
    names = readdirSync(dir).join("\n");
  } catch {
    return 0;
  }
  let removed = 0;
  for (const [name] of names.matchAll(pattern)) {
    const path = `${dir}${sep}${name}`;
    try {
      if (path === keep || (unusedMs > 0 && now - statSync(path).mtimeMs <= unusedMs)) continue;
      rmSync(path, { recursive: true, force: true });
      removed++;
    } catch {
      // removed by another process meanwhile, or not ours to remove
    }
  }
  return removed;
}
