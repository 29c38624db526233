/**
 * `hermes/testing`: the conformance kit as a library, what `hermes connector-test MODULE` runs. It starts a
 * real hermes core (store, runner, gate, chat flow) with a scripted model, loads the plugin module and its
 * `testDriver`, and checks what users notice. Each check gets its own temp directory and database.
 */
export type { SentMessage, TestDriver } from "./types.js";

export interface ConformanceOptions {
  /** Options merged over the ones `testDriver.setup()` returns. */
  options?: Record<string, unknown>;
  /** Only the checks whose names contain one of these strings. */
  only?: string[];
  /** Called as each check ends (the CLI prints a line). */
  onResult?: (result: CheckResult) => void;
  /** How long one check may take before it fails, in ms. Default 20 000. */
  timeoutMs?: number;
}

export interface CheckResult {
  name: string;
  ok: boolean;
  /** What went wrong, in words a plugin author can act on; when ok, empty or why the check did not apply. */
  detail: string;
  ms: number;
}

export interface ConformanceReport {
  passed: number;
  failed: number;
  results: CheckResult[];
}

/** The kit's implementation is loaded at the first call, so these types stay the package's whole public surface. */
const KIT = "../kit/run.js";

/** Runs the conformance checks against the plugin at `module` (a path or an installed package name). */
export async function runConformance(module: string, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const kit = (await import(new URL(KIT, import.meta.url).href)) as {
    runConformance(module: string, options: ConformanceOptions): Promise<ConformanceReport>;
  };
  return kit.runConformance(module, options);
}
