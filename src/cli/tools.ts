import type { McpServerReport } from "../mcp/types.js";
import type { Client } from "./client.js";

interface ToolRow {
  name: string;
  source: string;
  asks: string;
  why: string | null;
  prompt_tokens: number;
}

/** `hermes tools [--json]`: every tool the model can see, its source, whether it asks first and why, its prompt cost. */
export async function tools(client: Client, json: boolean): Promise<number> {
  const reply = await client.call({ op: "tools" });
  if (reply.type !== "result" || !reply.ok) throw new Error(reply.type === "error" ? reply.error.message : "unexpected reply");
  const data = reply.data as { tools: ToolRow[]; servers: McpServerReport[] };
  if (json) {
    process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
    return 0;
  }
  const width = Math.max(4, ...data.tools.map((t) => t.name.length));
  const lines = data.tools.map(
    (t) =>
      `${t.name.padEnd(width)}  ${t.source.padEnd(12)}  ${`~${t.prompt_tokens} tok`.padStart(9)}  asks: ${t.asks}${t.why ? ` (${t.why})` : ""}`,
  );
  const total = data.tools.reduce((sum, t) => sum + t.prompt_tokens, 0);
  lines.push(`${data.tools.length} tools, ~${total} tokens of signatures in every request`);
  for (const s of data.servers) lines.push(`server ${s.name}: ${serverLine(s)}`);
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

export function serverLine(s: McpServerReport): string {
  const state = s.connected ? "connected" : s.state === "connecting" ? "connecting" : "not connected";
  const error = s.last_error ? `; last error: ${s.last_error}` : "";
  const fix = s.fix ? `; fix: ${s.fix}` : "";
  return `${state} (${s.transport}), ${s.tools} tools, ${s.enabled} enabled, ~${s.prompt_tokens} prompt tokens${error}${fix}`;
}
