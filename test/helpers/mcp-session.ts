/** One MCP session to a fake stdio server, as the hub makes it from hermes.yaml, connected (or failed) once. */
import { join } from "node:path";
import { onTestFinished } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/log.js";
import { loadSdk } from "../../src/mcp/sdk.js";
import { createSession } from "../../src/mcp/session.js";
import type { McpSession } from "../../src/mcp/types.js";
import { useTempDir } from "./fixture.js";

/** Server `name` running `script` with `env`; closed when the test ends. */
export async function startStdioSession(name: string, script: string, env: Record<string, string> = {}): Promise<McpSession> {
  const dir = useTempDir();
  const yaml = `mcp:\n  servers:\n    ${name}:\n      command: ${process.execPath}\n      args: ["${script}"]\ntools:\n  enabled: ["${name}__*"]\n`;
  const cfg = parseConfig(yaml, join(dir, "hermes.yaml"), {}).config.mcp.servers[name];
  if (!cfg) throw new Error(`no server ${name}`);
  const session = createSession(
    name,
    { ...cfg, env },
    { sdk: loadSdk, log: createLogger("silent"), cached: [], onTools: () => {}, retryBaseMs: 60_000 },
  );
  onTestFinished(() => session.close());
  session.start();
  await session.firstAttempt();
  return session;
}
