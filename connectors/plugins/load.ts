import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import type { PluginEntry } from "../../src/config/plugins-schema.js";
import { ConfigError, type ConfigProblem, errorMessage } from "../../src/errors.js";
import { CONNECTOR_API, type ConnectorPlugin } from "../sdk/types.js";
import { importModule } from "./import-module.js";
import { checkOptions } from "./options.js";
import { findModule } from "./resolve.js";

/** A plugin ready to be created: its module loaded and checked, its options parsed. */
export interface LoadedPlugin {
  entry: PluginEntry;
  plugin: ConnectorPlugin<unknown>;
  options: unknown;
  /** The file imported, and the version of its package ("-" for a loose file). */
  file: string;
  version: string;
  /** The folder of the package holding `file`, when it belongs to one: where its code lives (see faults.ts). */
  root?: string;
}

/** `file:line:col` of a key path in hermes.yaml (LoadedConfig.locate). */
export type Locate = (path: (string | number)[]) => string;

/**
 * Imports and checks every `connectors.plugins` entry. Throws one ConfigError naming, for each entry that
 * cannot be used, the entry, the module and the fix; an option a plugin's schema rejects is named at its
 * line and column.
 */
export async function loadPlugins(
  entries: PluginEntry[],
  configFile: string,
  locate?: Locate,
  how: {
    /** Loads only these entries (a reload's new and changed ones); the others keep their place for file:line:col. */
    wanted?: (entry: PluginEntry) => boolean;
    /** Checks a JSON Schema against its standard first (config check, doctor); a start skips that. */
    strictSchemas?: boolean;
  } = {},
): Promise<LoadedPlugin[]> {
  const { wanted = () => true, strictSchemas = false } = how;
  const results = await Promise.all(
    entries.map((entry, i) => (wanted(entry) ? loadOne(entry, i, configFile, locate, strictSchemas) : { problems: [] })),
  );
  const problems = results.flatMap((r) => ("problems" in r ? r.problems : []));
  if (problems.length) throw new ConfigError(problems);
  return results.flatMap((r) => ("problems" in r ? [] : [r]));
}

async function loadOne(
  entry: PluginEntry,
  i: number,
  configFile: string,
  locate: Locate | undefined,
  strictSchemas: boolean,
): Promise<LoadedPlugin | { problems: ConfigProblem[] }> {
  const at = (path: (string | number)[], message: string): ConfigProblem => problemAt(configFile, locate, path, message);
  const base = ["connectors", "plugins", i];
  const fail = (message: string, fix: string) => ({
    problems: [at([...base, "module"], `plugin '${entry.name}' (module ${entry.module}): ${message}; fix: ${fix}`)],
  });
  const found = findModule(entry.module, dirname(configFile));
  if ("problem" in found) return fail(found.problem, found.fix);
  let mod: unknown;
  try {
    mod = await importModule(pathToFileURL(found.file).href);
  } catch (err) {
    return fail(
      `cannot be loaded: ${errorMessage(err)}`,
      "run the module with node to see the error, and correct it or reinstall the package",
    );
  }
  const plugin = defaultExport(mod);
  if (!plugin || typeof plugin.create !== "function") {
    return fail(
      "its default export has no create(host, options)",
      "export default { api: 1, create(host, options) { … } } (see docs/connectors.md)",
    );
  }
  if (plugin.api !== CONNECTOR_API) {
    return fail(
      `declares api ${JSON.stringify(plugin.api)}, this hermes supports api ${CONNECTOR_API}`,
      "install a version of the plugin written for api 1, or upgrade hermes",
    );
  }
  let options: unknown = entry.options;
  if (plugin.optionsSchema) {
    const checked = await checkOptions(plugin.optionsSchema, entry.options, strictSchemas);
    if (!checked.ok) {
      return { problems: checked.problems.map((p) => at([...base, "options", ...p.path], `plugin '${entry.name}': ${p.message}`)) };
    }
    options = checked.value;
  }
  const { file, version, root } = found;
  return { entry, plugin: plugin as ConnectorPlugin<unknown>, options, file, version, ...(root && { root }) };
}

/** The plugin object: ESM `export default`, CommonJS `module.exports`, or TypeScript's compiled `exports.default`. */
function defaultExport(mod: unknown): Partial<ConnectorPlugin<unknown>> | undefined {
  let value = (mod as { default?: unknown } | undefined)?.default ?? mod;
  if (value && typeof value === "object" && !("create" in value) && "default" in value) value = (value as { default: unknown }).default;
  return value && typeof value === "object" ? (value as Partial<ConnectorPlugin<unknown>>) : undefined;
}

function problemAt(file: string, locate: Locate | undefined, path: (string | number)[], message: string): ConfigProblem {
  const where = /^(.*):(\d+):(\d+)$/.exec(locate?.(path) ?? "");
  return { file: where?.[1] ?? file, line: Number(where?.[2] ?? 1), col: Number(where?.[3] ?? 1), path: path.join("."), message };
}
