// A fake MCP server over stdio, run by node: `node mcp-stdio-server.mjs`. MCP_LEDGER names the file that
// records executions, MCP_PID_FILE each started process; while the file MCP_DOWN_FILE exists the server exits
// at start (a broken install); MCP_START_DELAY_MS makes it start that much later (a slow npx download).
import { appendFileSync, existsSync } from "node:fs";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createTestServer } from "./mcp-tools.mjs";

if (process.env.MCP_DOWN_FILE && existsSync(process.env.MCP_DOWN_FILE)) {
  process.stderr.write("fake server: refusing to start (down file present)\n");
  process.exit(3);
}
if (process.env.MCP_START_DELAY_MS) await new Promise((resolve) => setTimeout(resolve, Number(process.env.MCP_START_DELAY_MS)));
process.stderr.write("fake server: starting\n");
if (process.env.MCP_PID_FILE) appendFileSync(process.env.MCP_PID_FILE, `${process.pid}\n`);
const server = createTestServer({ ledger: process.env.MCP_LEDGER, write: (line) => process.stdout.write(`${line}\n`) });
await server.connect(new StdioServerTransport());
process.stdin.on("end", () => process.exit(0));
