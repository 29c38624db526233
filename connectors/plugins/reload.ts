import type { LoadedConfig } from "../../src/config/load.js";
import type { PluginEntry } from "../../src/config/plugins-schema.js";
import type { Connector, Core } from "../../src/connector.js";
import { createPluginConnector, type PluginConnector } from "./connector.js";
import { loadPlugins } from "./load.js";

/** What a reload does to `connectors.plugins`, by entry name. */
export interface PluginChanges {
  started: string[];
  stopped: string[];
  /** Entries whose module or options changed: stopped, then made and started again. */
  restarted: string[];
}

/** A reload's plugin changes, their modules already loaded and checked; nothing runs or stops until `apply`. */
export interface PluginReload {
  changes: PluginChanges;
  /** Stops the removed and changed plugins, starts the new ones; returns the connectors with them in place. */
  apply(connectors: Connector[]): Promise<Connector[]>;
}

/**
 * Compares the running entries with the reloaded file's and loads the new and changed ones. A module that
 * cannot be used throws the ConfigError a start would (entry, module, fix): the reload is then refused
 * and the running plugins are left alone. A changed `allowed_users` alone needs nothing: hermes reads it
 * at each message.
 */
export async function preparePluginReload(core: Core, running: PluginEntry[], next: LoadedConfig): Promise<PluginReload> {
  const entries = next.config.connectors.plugins;
  const before = new Map(running.map((e) => [e.name, e]));
  const after = new Set(entries.map((e) => e.name));
  const changed = (e: PluginEntry) => {
    const old = before.get(e.name);
    return old !== undefined && JSON.stringify([old.module, old.options]) !== JSON.stringify([e.module, e.options]);
  };
  const changes: PluginChanges = {
    started: entries.filter((e) => !before.has(e.name)).map((e) => e.name),
    stopped: running.filter((e) => !after.has(e.name)).map((e) => e.name),
    restarted: entries.filter(changed).map((e) => e.name),
  };
  const fresh = new Set([...changes.started, ...changes.restarted]);
  const loaded = await loadPlugins(entries, next.file, next.locate, { wanted: (e) => fresh.has(e.name) });
  return {
    changes,
    async apply(connectors) {
      const leaving = new Set([...changes.stopped, ...changes.restarted]);
      // By entry name: the email connector is hosted like a plugin but is no entry.
      const isPlugin = (c: Connector) => c.plugin !== undefined && before.has(c.name);
      const left = connectors.filter((c) => isPlugin(c) && leaving.has(c.name)) as PluginConnector[];
      const made = loaded.map((plugin) => createPluginConnector(core, plugin));
      // Runs the old instance took answer through the new one (their renderers hold the old one's surface),
      // from the moment it stops: a reply that ends meanwhile waits for the new one's start.
      for (const old of left) {
        const next = made.find((c) => c.name === old.name);
        if (next) old.handOver(next);
      }
      await Promise.allSettled(left.map((c) => c.stop()));
      await Promise.all(made.map((c) => c.start()));
      const plugins = new Map([...connectors.filter((c) => isPlugin(c) && !leaving.has(c.name)), ...made].map((c) => [c.name, c]));
      const inOrder = entries.flatMap((e) => plugins.get(e.name) ?? []);
      return [...connectors.filter((c) => !isPlugin(c)), ...inOrder];
    },
  };
}
