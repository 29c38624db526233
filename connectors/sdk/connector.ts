/**
 * `hermes/connector`: the public SDK for connector plugins (SPEC §17). Types, the contract version, and the
 * few helpers a plugin author needs. See docs/connectors.md.
 */
export { approvalButtonIds, parseApprovalButton } from "./buttons.js";
export { splitText } from "./split.js";
export type {
  Button,
  ButtonPress,
  Connector,
  ConnectorHost,
  ConnectorPlugin,
  Health,
  HostLog,
  InboundMessage,
  Limits,
  OptionsSchema,
  OutboundMessage,
  SentMessage,
  TestDriver,
} from "./types.js";
export { CONNECTOR_API } from "./types.js";

import type { ConnectorPlugin } from "./types.js";

/** Identity, for the types: `export default defineConnector({ api: CONNECTOR_API, create(host, options) { … } })`. */
export function defineConnector<Options = Record<string, unknown>>(plugin: ConnectorPlugin<Options>): ConnectorPlugin<Options> {
  return plugin;
}
