// What a plugin hands hermes that the contract does not allow (a press by no one, an async health, a call
// after it was stopped) is refused or reported in words the plugin's author can act on (SPEC §17).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Daemon, startDaemon } from "../../../src/daemon/daemon.js";
import { type FakeModel, startFakeModel } from "../../fakes/model-server.js";
import { baseSettings, createTempDir, writeConfig } from "../../helpers/hermes.js";
import { waitFor } from "../../helpers/wait.js";

interface Host {
  receive(m: unknown): Promise<void>;
  press(p: unknown): Promise<void>;
}
interface Shown {
  chat: string;
  text: string;
  buttons?: { id: string; label: string }[];
}

let daemon: Daemon | undefined;
let model: FakeModel | undefined;
let dir: ReturnType<typeof createTempDir>;
beforeEach(() => {
  dir = createTempDir();
  (globalThis as unknown as { __misuse: unknown }).__misuse = { hosts: {}, shown: [] };
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await model?.close();
  dir.cleanup();
});

const world = () => (globalThis as unknown as { __misuse: { hosts: Record<string, Host>; shown: Shown[] } }).__misuse;

/** A plugin module written to the test's folder that shows what it is sent; `extra` adds to the connector it makes. */
async function start(name: string, extra: string, allowed: unknown[] = ["alice"], settings: Record<string, unknown> = {}): Promise<Daemon> {
  const module = join(dir.path, `${name}.mjs`);
  writeFileSync(
    module,
    `export default { api: 1, create(host) {
      const w = globalThis.__misuse;
      w.hosts["${name}"] = host;
      return {
        async start() {}, async stop() {},
        async send(chat, m) { w.shown.push({ chat, ...m }); return { id: String(w.shown.length) }; },
        ${extra}
      };
    } };\n`,
  );
  model = await startFakeModel();
  const config = writeConfig(dir.path, {
    ...baseSettings(model.url),
    ...settings,
    log: { level: "silent" },
    connectors: { cli: { enabled: false }, cron: { enabled: false }, plugins: [{ name, module, allowed_users: allowed }] },
  });
  daemon = await startDaemon(config);
  return daemon;
}

it("a press by no one (an empty id, a list, an object) decides nothing, even when allowed_users holds an empty id", async () => {
  // `allowed_users: ["alice", "${EXTRA_USER:-}"]` with EXTRA_USER unset reads as this.
  const d = await start("btn", "", ["alice", ""], { tools: { enabled: ["clock", "shell"] } });
  model?.script({ toolCalls: [{ name: "shell", arguments: { command: "echo pressed" } }] });
  model?.respond(() => ({ text: "done after approval" }));
  const host = world().hosts.btn as Host;
  await host.receive({ chat: "c1", user: "alice", text: "run it", id: "m1" });
  const request = await waitFor(() => world().shown.find((m) => (m.buttons?.length ?? 0) === 2), { message: "the approval request" });
  const approve = request.buttons?.find((b) => /approve/i.test(b.label))?.id;
  for (const user of ["", undefined, ["alice"], { toString: () => "alice" }]) await host.press({ chat: "c1", user, button: approve });
  expect(d.core.store.approvals.pending().map((a) => a.status)).toEqual(["pending"]);
  await host.press({ chat: "c1", user: "alice", button: approve });
  await waitFor(() => world().shown.find((m) => m.text.includes("done after approval")), { message: "the reply after approval" });
});

it("an async health() (a promise, here one that rejects) shows red with what is wrong, and its rejection is handled", async () => {
  const d = await start("asyncy", `async health() { throw new Error("no health yet"); },`);
  const entry = (await d.core.status()).connectors.find((c) => c.name === "asyncy");
  expect(entry).toMatchObject({ ok: false, detail: "health() returned a promise (health() must not be async), not { ok, detail }" });
});

it("a plugin that hands hermes a message after it was stopped is told it is stopped, not that its create() failed", async () => {
  const d = await start("late", "");
  const host = world().hosts.late as Host;
  daemon = undefined;
  await d.stop();
  const late = host.receive({ chat: "c1", user: "alice", text: "after stop" });
  await expect(late).rejects.toThrow("late: the connector is not ready (it is stopped)");
  await expect(host.press({ chat: "c1", user: "alice", button: "approve:x" })).rejects.toThrow(/\(it is stopped\)/);
});
