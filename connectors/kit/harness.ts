import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { z } from "zod";
import { type Daemon, startDaemon } from "../../src/daemon/daemon.js";
import { defineTool } from "../../src/tools/define.js";
import type { ConnectorHost, ConnectorPlugin, InboundMessage, Connector as PluginInstance, SentMessage, TestDriver } from "../sdk/types.js";
import { createScriptedModel, KIT_TOOL, type ScriptedModel } from "./scripted-model.js";

/** The entry name the kit gives the plugin; the allowed user and a stranger. */
export const NAME = "kit";
export const OWNER = "alice";
export const STRANGER = "mallory";

const KIT_GLOBAL = Symbol.for("hermes.connector-kit");

/** Every chat the checks write in, handed to `testDriver.setup`: a network that subscribes per chat (ntfy topics) needs them first. */
export const KIT_CHATS = ["c1", "c2", "s1", "l1", "t1", "a1", "r1", "x1", "d1", "v1", "boom"];

/** What a check can set and see around the plugin (the kit wraps it; the daemon loads the wrapper by path). */
export interface Control {
  /** Sends to this chat throw, as a broken network would. */
  failSendTo?: string;
  /** The plugin's limits with buttons: false, to check text approvals. */
  textApprovals?: boolean;
  host?: ConnectorHost;
  instance?: PluginInstance;
  /** Every message the plugin handed to host.receive. */
  received: InboundMessage[];
  toolRuns: string[];
}

/** One check's world: a temp directory, the fake network (the driver), a real daemon with the scripted model. */
export interface Harness {
  control: Control;
  model: ScriptedModel;
  daemon: Daemon;
  sent(chat: string): Promise<SentMessage[]>;
  inbound(chat: string, user: string, text: string): Promise<void>;
  press(chat: string, user: string, button: string): Promise<void>;
  /** Waits until `chat` shows what `until` accepts; resolves those messages. Fails with what it saw. */
  waitFor(chat: string, what: string, until: (messages: SentMessage[]) => boolean): Promise<SentMessage[]>;
  /** Lets anything still on its way arrive, then resolves what `chat` shows. */
  settled(chat: string): Promise<SentMessage[]>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  extraOptions: Record<string, unknown>;
  timeoutMs: number;
  /** Set before the daemon starts (say, text approvals). */
  control?: Partial<Control>;
}

export async function openHarness(plugin: ConnectorPlugin<unknown>, driver: TestDriver, opts: HarnessOptions): Promise<Harness> {
  const { extraOptions, timeoutMs } = opts;
  const dir = mkdtempSync(join(tmpdir(), "hermes-kit-"));
  const control: Control = { received: [], toolRuns: [], ...opts.control };
  (globalThis as Record<symbol, unknown>)[KIT_GLOBAL] = { plugin: wrapPlugin(plugin, control) };
  writeFileSync(join(dir, "kit-plugin.mjs"), `export default globalThis[Symbol.for("hermes.connector-kit")].plugin;\n`);
  const { options } = await driver.setup({ chats: KIT_CHATS });
  const configPath = join(dir, "hermes.yaml");
  writeFileSync(configPath, stringify(kitConfig(dir, { ...options, ...extraOptions })));
  const model = createScriptedModel();
  const tool = defineTool({
    name: KIT_TOOL,
    description: "A harmless action the owner must approve (the conformance kit's).",
    input: z.strictObject({ tag: z.string() }),
    needsConfirmation: true,
    run: async ({ tag }) => {
      control.toolRuns.push(tag);
      return `kit action ${tag} ran`;
    },
  });
  const start = () => startDaemon(configPath, { model: model.client, extraTools: [tool] });
  let daemon = await start();
  const sent = async (chat: string) => [...(await driver.sent(chat))];
  const harness: Harness = {
    control,
    model,
    get daemon() {
      return daemon;
    },
    sent,
    inbound: async (chat, user, text) => void (await driver.inbound({ chat, user, text })),
    press: async (chat, user, button) => void (await driver.press({ chat, user, button })),
    async waitFor(chat, what, until) {
      const end = Date.now() + timeoutMs;
      let seen: SentMessage[] = [];
      while (Date.now() < end) {
        seen = await sent(chat);
        if (until(seen)) return seen;
        await pause(25);
      }
      throw new Error(
        `waited ${timeoutMs} ms for ${what} in chat ${chat}; it shows ${JSON.stringify(seen.map((m) => m.text.slice(0, 80)))}`,
      );
    },
    async settled(chat) {
      await pause(400);
      return sent(chat);
    },
    async restart() {
      await daemon.stop();
      daemon = await start();
    },
    async close() {
      await daemon.stop().catch(() => {});
      await Promise.resolve(driver.teardown()).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

function kitConfig(dir: string, options: Record<string, unknown>) {
  return {
    log: { level: process.env.HERMES_KIT_LOG ?? "silent" },
    storage: { path: join(dir, "hermes.db") },
    tools: { enabled: [] },
    model: { provider: "ollama", base_url: "http://127.0.0.1:9", name: "scripted" },
    connectors: {
      cli: { enabled: false },
      cron: { enabled: false },
      plugins: [{ name: NAME, module: join(dir, "kit-plugin.mjs"), allowed_users: [OWNER], options }],
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

export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
