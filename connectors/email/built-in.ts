/**
 * `connectors.email` as the daemon loads it: the email plugin (./index.ts) hosted exactly like a
 * `connectors.plugins` entry, with `allowed_senders` as its allowlist. Imported only when email is enabled.
 */
import type { Connector, Core } from "../../src/connector.js";
import { VERSION } from "../../src/version.js";
import { createPluginConnector } from "../plugins/connector.js";
import type { LoadedPlugin } from "../plugins/load.js";
import plugin from "./index.js";
import { senderAllowed } from "./trust.js";

export function createEmailConnector(core: Core): Connector {
  const config = core.config();
  const loaded: LoadedPlugin = {
    entry: { name: "email", module: "built-in", allowed_users: [], options: {} },
    plugin: plugin as LoadedPlugin["plugin"],
    options: { ...config.connectors.email, files_root: config.tools.files.root },
    file: "",
    version: VERSION,
  };
  return createPluginConnector(core, loaded, {
    allowed: (user) => senderAllowed(core.config().connectors.email.allowed_senders, user),
    home: "connectors.email.allowed_senders",
  });
}
