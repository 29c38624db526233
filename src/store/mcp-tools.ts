import type { Db } from "./db.js";
import { statements } from "./statements.js";

/** The last tool list each MCP server sent (as its JSON), kept so its tools exist across restarts. */
export class McpToolListStore {
  private readonly q;

  constructor(db: Db) {
    this.q = statements(db, {
      load: () => db.prepare("SELECT tools FROM mcp_tool_lists WHERE server = ?").pluck(),
      save: () =>
        db.prepare(
          "INSERT INTO mcp_tool_lists (server, tools, updated_at) VALUES (?, ?, ?) ON CONFLICT(server) DO UPDATE SET tools = excluded.tools, updated_at = excluded.updated_at",
        ),
    });
  }

  load(server: string): unknown[] {
    const text = this.q.load.get(server) as string | undefined;
    if (!text) return [];
    try {
      const parsed: unknown = JSON.parse(text);
      return Array.isArray(parsed) ? parsed : [];
    } catch {
      return [];
    }
  }

  save(server: string, tools: unknown[]): void {
    this.q.save.run(server, JSON.stringify(tools), Date.now());
  }
}
