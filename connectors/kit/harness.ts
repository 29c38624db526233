import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { z } from "zod";
import { type Daemon, startDaemon } from "../../src/daemon/daemon.js";
import { defineTool } from "../../src/tools/define.js";
import type { SentMessage } from "../sdk/types.js";
import { createScriptedModel, KIT_TOOL, type ScriptedModel } from "./scripted-model.js";
import { type Control, KIT_CHATS, type KitSubject, type OpenSubject } from "./subject.js";

/** One check's world: a temp directory, the subject's network, a real daemon with the scripted model. */
export interface Harness {
  control: Control;
  /** The connector under test: its name, its profile, and the network as opened for this check. */
  subject: KitSubject;
  network: OpenSubject;
  model: ScriptedModel;
  daemon: Daemon;
  /** How long a check waits for what it expects before it fails. */
  timeoutMs: number;
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
  timeoutMs: number;
  /** Set before the daemon starts (say, text approvals, or the chat whose sends fail). */
  control?: Partial<Control>;
}

export async function openHarness(subject: KitSubject, opts: HarnessOptions): Promise<Harness> {
  const { timeoutMs } = opts;
  const { settleMs = 400, pollMs = 25 } = subject.profile;
  const dir = mkdtempSync(join(tmpdir(), "hermes-kit-"));
  const control: Control = { received: [], toolRuns: [], ...opts.control };
  let network: OpenSubject;
  try {
    network = await subject.open({ dir, control, chats: KIT_CHATS });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const { driver } = network;
  const configPath = join(dir, "hermes.yaml");
  writeFileSync(configPath, stringify(kitConfig(dir, network.connectors)));
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
  const start = async () => {
    const started = await startDaemon(configPath, { model: model.client, extraTools: [tool] });
    await network.ready?.();
    return started;
  };
  let daemon: Daemon | undefined;
  const close = async () => {
    await daemon?.stop().catch(() => {});
    await Promise.resolve(driver.teardown()).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    daemon = await start();
  } catch (err) {
    await close();
    throw err;
  }
  const sent = async (chat: string) => [...(await driver.sent(chat))];
  return {
    control,
    subject,
    network,
    model,
    timeoutMs,
    get daemon() {
      return daemon as Daemon;
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
        await pause(pollMs);
      }
      throw new Error(
        `waited ${timeoutMs} ms for ${what} in chat ${chat}; it shows ${JSON.stringify(seen.map((m) => m.text.slice(0, 80)))}`,
      );
    },
    async settled(chat) {
      await pause(settleMs);
      return sent(chat);
    },
    async restart() {
      await daemon?.stop();
      daemon = await start();
    },
    close,
  };
}

function kitConfig(dir: string, connectors: Record<string, unknown>) {
  return {
    log: { level: process.env.HERMES_KIT_LOG ?? "silent" },
    storage: { path: join(dir, "hermes.db") },
    tools: { enabled: [] },
    model: { provider: "ollama", base_url: "http://127.0.0.1:9", name: "scripted" },
    connectors: { cli: { enabled: false }, cron: { enabled: false }, ...connectors },
  };
}

export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
