/** Runs the daemon inside the test process, for tests that need instrumented tools. */
import { type Daemon, startDaemon } from "../../src/daemon/daemon.js";
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
