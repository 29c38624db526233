import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { importModule } from "../plugins/import-module.js";
import { jsonSchemaProblem } from "../plugins/options.js";
import { findModule } from "../plugins/resolve.js";
import type { CheckResult, ConformanceOptions, ConformanceReport } from "../sdk/testing.js";
import { CONNECTOR_API, type ConnectorPlugin, type TestDriver } from "../sdk/types.js";
import { CHECKS, type Check } from "./checks.js";
import { openHarness } from "./harness.js";
import { pluginSubject } from "./plugin-subject.js";
import type { KitSubject } from "./subject.js";

/** Runs every check against the plugin at `module` (see ../sdk/testing.ts). Never throws for a broken plugin: it fails. */
export async function runConformance(module: string, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const results: CheckResult[] = [];
  const record = (result: CheckResult) => {
    results.push(result);
    options.onResult?.(result);
  };
  const loaded = await loadForKit(module);
  record({
    name: "the module loads: api 1, create(), a testDriver",
    ok: !("problem" in loaded),
    detail: "problem" in loaded ? loaded.problem : "",
    ms: 0,
  });
  if ("problem" in loaded) return report(results);
  const rest = await runSubject(pluginSubject(loaded.plugin, loaded.driver, options.options ?? {}), options);
  return report([...results, ...rest.results]);
}

/**
 * Runs every check against a subject: a plugin (above) or a built-in connector with a driver for its fake
 * network (the repo's tests). Each check gets a fresh world; a check the subject's profile rules out
 * passes with its "not applicable: why" note.
 */
export async function runSubject(subject: KitSubject, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const results: CheckResult[] = [];
  const checks = CHECKS.filter((c) => !options.only?.length || options.only.some((o) => c.name.includes(o)));
  for (const check of checks) {
    const result = await runCheck(subject, check, options.timeoutMs ?? 20_000);
    results.push(result);
    options.onResult?.(result);
  }
  return report(results);
}

async function runCheck(subject: KitSubject, check: Check, timeoutMs: number): Promise<CheckResult> {
  const started = Date.now();
  const skipped = check.skip?.(subject.profile);
  if (skipped) return { name: check.name, ok: true, detail: skipped, ms: 0 };
  let failure = "";
  let note = "";
  try {
    const h = await openHarness(subject, { timeoutMs, control: check.control });
    try {
      note = (await check.run(h)) ?? "";
    } finally {
      await h.close();
    }
  } catch (err) {
    failure = err instanceof Error ? err.message : String(err);
  }
  return { name: check.name, ok: failure === "", detail: failure || note, ms: Date.now() - started };
}

function report(results: CheckResult[]): ConformanceReport {
  return { passed: results.filter((r) => r.ok).length, failed: results.filter((r) => !r.ok).length, results };
}

async function loadForKit(module: string): Promise<{ plugin: ConnectorPlugin<unknown>; driver: TestDriver } | { problem: string }> {
  const asPath = resolve(module);
  const found = findModule(existsSync(asPath) ? asPath : module, process.cwd(), {
    folder: "the current folder",
    install: "in the current folder",
  });
  if ("problem" in found) return { problem: `${found.problem}; ${found.fix}` };
  let mod: Record<string, unknown>;
  try {
    mod = (await importModule(pathToFileURL(found.file).href)) as Record<string, unknown>;
  } catch (err) {
    return { problem: `cannot load ${found.file}: ${err instanceof Error ? err.message : String(err)}` };
  }
  const fallback = (mod.default ?? {}) as Record<string, unknown>;
  const plugin = (fallback.default && !("create" in fallback) ? fallback.default : fallback) as Partial<ConnectorPlugin<unknown>>;
  const driver = (mod.testDriver ?? fallback.testDriver) as TestDriver | undefined;
  if (typeof plugin.create !== "function") return { problem: "the default export has no create(host, options)" };
  if (plugin.api !== CONNECTOR_API)
    return { problem: `the plugin declares api ${JSON.stringify(plugin.api)}; this kit checks api ${CONNECTOR_API}` };
  if (!driver || typeof driver.setup !== "function" || typeof driver.sent !== "function") {
    return { problem: "the module exports no testDriver { setup, inbound, press, sent, teardown } (SPEC §17)" };
  }
  const schemaProblem = await optionsSchemaProblem(plugin.optionsSchema);
  if (schemaProblem) return { problem: schemaProblem };
  return { plugin: plugin as ConnectorPlugin<unknown>, driver };
}

/** A JSON Schema for the options that its own standard rejects (hermes start skips that check; the kit does not). */
async function optionsSchemaProblem(schema: ConnectorPlugin<unknown>["optionsSchema"]): Promise<string | undefined> {
  if (!schema || typeof (schema as { safeParse?: unknown }).safeParse === "function") return undefined;
  const problem = await jsonSchemaProblem(schema);
  return problem && `optionsSchema is not a valid JSON Schema: ${problem}`;
}
