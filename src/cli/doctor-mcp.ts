import type { Config } from "../config/schema.js";
import { createLogger } from "../log.js";
import type { McpServerReport } from "../mcp/types.js";
import { Client } from "./client.js";
import type { Check } from "./doctor-check.js";

const PROBE_MS = 10_000;

/** One check per MCP server: as the running daemon sees it, else by connecting to it once from here. */
export async function checkMcpServers(config: Config, secrets: readonly string[] = []): Promise<Check[]> {
  const names = Object.keys(config.mcp.servers);
  if (names.length === 0) return [];
  const reports = (await fromDaemon(config.connectors.cli.socket)) ?? (await probeAll(config, secrets));
  return reports.map((r) => {
    const unmatched = r.unmatched ?? [];
    const nothing = unmatched.length ? `; tools.enabled names no tool of it: ${unmatched.join(", ")}` : "";
    const fix = r.fix ?? (unmatched.length ? `\`hermes tools\` lists what ${r.name} offers; fix or remove those entries` : undefined);
    // A server the daemon is still starting (its first connection, no error yet) has not failed.
    const starting = !r.connected && r.state === "connecting" && !r.last_error;
    if (starting) {
      return {
        name: `mcp ${r.name}`,
        outcome: "warn",
        detail: `still connecting (${r.transport}): the daemon is starting it; its tools come once it answers`,
        fix: "run `hermes doctor` again in a few seconds; a server that stays here is slow to start (see its timeout_s)",
      };
    }
    return {
      name: `mcp ${r.name}`,
      outcome: r.connected ? (r.last_error || unmatched.length ? "warn" : "ok") : "fail",
      detail: `${r.connected ? "connected" : "not connected"} (${r.transport}), ${r.tools} tools, ${r.enabled} enabled, ~${r.prompt_tokens} prompt tokens${r.last_error ? `; ${r.last_error}` : ""}${nothing}`,
      ...(fix ? { fix } : {}),
    };
  });
}

async function fromDaemon(socket: string): Promise<McpServerReport[] | undefined> {
  try {
    const client = await Client.connect(socket);
    try {
      const reply = await client.call({ op: "status" });
      return reply.type === "result" ? (reply.data as { mcp?: McpServerReport[] }).mcp : undefined;
    } finally {
      client.close();
    }
  } catch {
    return undefined;
  }
}

/** `secrets`: the config's `${VAR}` values, masked where a server's command line is shown. */
async function probeAll(config: Config, secrets: readonly string[]): Promise<McpServerReport[]> {
  const [{ createMcpHub }, { openStore }] = await Promise.all([import("../mcp/hub.js"), import("../store/store.js")]);
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { tmpdir } = await import("node:os");
  const dir = mkdtempSync(join(tmpdir(), "hermes-doctor-"));
  const store = openStore(join(dir, "probe.db"));
  const hub = createMcpHub(config, { store, log: createLogger("silent"), secrets });
  try {
    await hub.settled(PROBE_MS);
    return hub.reports();
  } finally {
    await hub.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
