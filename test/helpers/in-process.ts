/** Runs the daemon inside the test process, for tests that need instrumented tools. */
import { z } from "zod";
import { type Daemon, startDaemon } from "../../src/daemon/daemon.js";
import { defineTool } from "../../src/tools/define.js";
import type { AnyTool } from "../../src/tools/types.js";
import { createTempDir, writeConfig } from "./hermes.js";

export async function startInProcess(settings: Record<string, unknown>, extraTools: AnyTool[]) {
  const dir = createTempDir();
  const configPath = writeConfig(dir.path, { ...settings, log: { level: "silent" } });
  const daemon: Daemon = await startDaemon(configPath, { extraTools });
  return {
    daemon,
    dir: dir.path,
    /** Sends a message and resolves the run's final reply. */
    ask: (text: string, session = "cli:test") => daemon.core.submit({ sessionKey: session, text, source: "cli" }).done,
    close: async () => {
      await daemon.stop();
      dir.cleanup();
    },
  };
}

/** Counts how many instances of a set of tools run at the same moment. */
export function createOverlapProbe() {
  let active = 0;
  let maxActive = 0;
  let started = 0;
  const startWaiters: { n: number; resolve: () => void }[] = [];
  const waitForStarts = (n: number, limitMs: number) =>
    new Promise<void>((resolve) => {
      if (started >= n) return resolve();
      startWaiters.push({ n, resolve });
      setTimeout(resolve, limitMs).unref();
    });
  const tool = (name: string, readOnly: boolean, order: string[]) =>
    defineTool({
      name,
      description: `test tool ${name}`,
      input: z.strictObject({}),
      readOnly,
      run: async () => {
        active++;
        started++;
        order.push(`start ${name}`);
        maxActive = Math.max(maxActive, active);
        for (const w of startWaiters.filter((w) => started >= w.n)) w.resolve();
        // Read-only tools meet here when they run together; a tool running alone gives up after a moment.
        await waitForStarts(2, 300);
        active--;
        order.push(`end ${name}`);
        return `${name} done`;
      },
    });
  return {
    tool,
    get maxActive() {
      return maxActive;
    },
  };
}
