// A fake MCP server over stdio built on the SDK's low-level Server, as servers in Python or Go are: a tool's
// failure is a JSON-RPC error ("the garden valve is closed"), not a result marked isError. PIDS names a file
// that records each started process.
import { appendFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

if (process.env.PIDS) appendFileSync(process.env.PIDS, `${process.pid}\n`);
const server = new Server({ name: "valves", version: "1" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: "open_valve", inputSchema: { type: "object" } },
    { name: "close_valve", inputSchema: { type: "object" } },
    { name: "status", inputSchema: { type: "object" } },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (request.params.name === "status") return { content: [{ type: "text", text: "all valves shut" }] };
  // -32000, JSON-RPC's plain "server error", as servers not built on the SDK send a tool's failure.
  if (request.params.name === "close_valve") throw new McpError(-32000, "the valve is already closed");
  throw new McpError(-32603, "the garden valve is closed");
});
await server.connect(new StdioServerTransport());
process.stdin.on("end", () => process.exit(0));
