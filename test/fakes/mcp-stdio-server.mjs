// A fake MCP server over stdio, run by node: `node mcp-stdio-server.mjs`. MCP_LEDGER names the file that
// records executions; while the file MCP_DOWN_FILE exists the server exits at start (a broken install).
import { existsSync } from "node:fs";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createTestServer } from "./mcp-tools.mjs";

if (process.env.MCP_DOWN_FILE && existsSync(process.env.MCP_DOWN_FILE)) {
  process.stderr.write("fake server: refusing to start (down file present)\n");
  process.exit(3);
}
process.stderr.write("fake server: starting\n");
const server = createTestServer({ ledger: process.env.MCP_LEDGER, write: (line) => process.stdout.write(`${line}\n`) });
await server.connect(new StdioServerTransport());
process.stdin.on("end", () => process.exit(0));
