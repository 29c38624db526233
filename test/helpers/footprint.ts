/** What a daemon loaded: the builtins and the files it required, recorded at its exit by a preload. */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const RECORDER = resolve(import.meta.dirname, "../fixtures/footprint/record-modules.cjs");

export interface Loaded {
  builtins: string[];
  files: string[];
}

/** The environment that makes a daemon record what it loaded into `dir`, and the reader of that record (after its exit). */
export function moduleRecorder(dir: string): { env: NodeJS.ProcessEnv; read(): Loaded } {
  const out = join(dir, "modules.json");
  return {
    env: { NODE_OPTIONS: `--require ${RECORDER}`, HERMES_TEST_MODULES: out },
    read: () => JSON.parse(readFileSync(out, "utf8")) as Loaded,
  };
}

/** The files a daemon loaded from packages (node_modules), named from the package on. */
export const packageFiles = (loaded: Loaded): string[] =>
  loaded.files.filter((f) => f.includes("/node_modules/")).map((f) => f.replace(/.*\/node_modules\//, ""));
