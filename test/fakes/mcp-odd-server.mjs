// A fake MCP server over stdio built on the SDK's low-level Server, which sends whatever tool list it is given:
// ODD_TOOLS is that list as JSON (tools without an inputSchema, with a broken output schema, …). Every call is
// answered with the text "<name> ran".
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "odd", version: "1" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: JSON.parse(process.env.ODD_TOOLS ?? "[]") }));
server.setRequestHandler(CallToolRequestSchema, async (request) => ({
  content: [{ type: "text", text: `${request.params.name} ran` }],
}));
await server.connect(new StdioServerTransport());
process.stdin.on("end", () => process.exit(0));
