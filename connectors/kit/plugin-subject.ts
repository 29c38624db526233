/**
 * A plugin module and its `testDriver` as a kit subject: the daemon loads the plugin by path, through a
 * wrapper that lets the kit see what is received and make sends to one chat throw.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ConnectorHost, ConnectorPlugin, Connector as PluginInstance, TestDriver } from "../sdk/types.js";
import { type Control, type KitSubject, NAME, OWNER } from "./subject.js";

const KIT_GLOBAL = Symbol.for("hermes.connector-kit");

export function pluginSubject(plugin: ConnectorPlugin<unknown>, driver: TestDriver, extraOptions: Record<string, unknown>): KitSubject {
  return {
    name: NAME,
    profile: { strangerNotice: true, textApprovals: true, failedSendHealth: /on purpose/ },
    async open({ dir, control, chats }) {
      (globalThis as Record<symbol, unknown>)[KIT_GLOBAL] = { plugin: wrapPlugin(plugin, control) };
      const module = join(dir, "kit-plugin.mjs");
      writeFileSync(module, `export default globalThis[Symbol.for("hermes.connector-kit")].plugin;\n`);
      const { options } = await driver.setup({ chats });
      return {
        connectors: { plugins: [{ name: NAME, module, allowed_users: [OWNER], options: { ...options, ...extraOptions } }] },
        driver,
        limits: () => ({
          text: Number(control.instance?.limits?.text) || 4000,
          buttons: control.instance?.limits?.buttons !== false,
          edits: typeof control.instance?.edit === "function",
        }),
        userId: (user) => user,
        chatId: (chat) => chat,
        // The network's redelivery, as the plugin would hand it over: the same message with the same id. The id
        // is optional (SPEC §17): a plugin that gives none has no exactly-once to check.
        async redeliver(_chat, _user, text) {
          const first = control.received.find((m) => m.text === text);
          if (first?.id === undefined)
            return "not applicable: the plugin gives host.receive no message ids (optional), so a message its network delivers again runs again";
          await control.host?.receive({ ...first });
          return undefined;
        },
      };
    },
  };
}

/** The plugin as written, with the kit's hands on it: it sees what is received and can make sends fail. */
function wrapPlugin(plugin: ConnectorPlugin<unknown>, control: Control): ConnectorPlugin<unknown> {
  return {
    api: plugin.api,
    ...(plugin.optionsSchema && { optionsSchema: plugin.optionsSchema }),
    create(host, options) {
      const spied: ConnectorHost = {
        name: host.name,
        log: host.log,
        state: host.state,
        press: (p) => host.press(p),
        receive: (m) => {
          control.received.push(m);
          return host.receive(m);
        },
      };
      control.host = host;
      const it = plugin.create(spied, options);
      control.instance = it;
      return {
        start: () => it.start(),
        stop: () => it.stop(),
        ...(it.health && { health: () => it.health?.() ?? { ok: true, detail: "" } }),
        send: async (chat, message) => {
          if (control.failSendTo === chat) throw new Error("send failed on purpose (the kit's check)");
          return it.send(chat, message);
        },
        ...(it.edit && {
          edit: (chat: string, id: string, message: Parameters<NonNullable<PluginInstance["edit"]>>[2]) =>
            it.edit?.(chat, id, message) ?? Promise.resolve(),
        }),
        limits: { ...it.limits, ...(control.textApprovals && { buttons: false }) },
      };
    },
  };
}
