/** What the connector plugin tests share: the fixture plugins and settings that load them. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { baseSettings } from "./hermes.js";

/** test/fixtures/plugins/, where the fixture plugins live. */
export const PLUGIN_FIXTURES = fileURLToPath(new URL("../fixtures/plugins/", import.meta.url));
/** A plugin that logs its start and stop under its `tag` and can be told to fail (`options.fail`). */
export const RESTLESS = join(PLUGIN_FIXTURES, "restless/plugin.mjs");
/** A chat plugin whose rooms live in memory, version 2.3.4. */
export const MEMORY_CHAT = join(PLUGIN_FIXTURES, "memory-chat/index.js");

/** `baseSettings` with `connectors.plugins` set to `plugins`; `extra` is merged at the top level. */
export function pluginSettings(modelUrl: string, plugins: unknown[], extra: Record<string, unknown> = {}) {
  const base = baseSettings(modelUrl);
  return { ...base, ...extra, connectors: { ...(base.connectors as object), plugins } };
}
