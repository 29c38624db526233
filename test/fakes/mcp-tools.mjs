// The tools of the fake MCP servers (stdio and Streamable HTTP), written with the SDK's server side.
// Every call that has an effect appends a line to the ledger file, so tests can count executions.
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";

const note = (ledger, line) => ledger && appendFileSync(ledger, `${line}\n`);
const text = (t) => ({ content: [{ type: "text", text: t }] });

/** A McpServer with the test tools. `write` sends raw lines to the client (stdio only). */
export function createTestServer({ ledger, write, name = "fake" } = {}) {
  const server = new McpServer({ name, version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
  server.registerTool(
    "read_state",
    {
      title: "Read state",
      description: "Reads the state of one entity.\n\n\n   Use it to look,   not to change.",
      inputSchema: { entity: z.string().describe("an entity id, e.g. light.kitchen") },
      annotations: { readOnlyHint: true },
    },
    async ({ entity }) => {
      note(ledger, `read_state ${entity}`);
      return { content: [{ type: "text", text: `${entity} is on` }], structuredContent: { entity, state: "on" } };
    },
  );
  server.registerTool(
    "set_light",
    { description: "Turns a light on or off.", inputSchema: { room: z.string(), on: z.boolean() } },
    async ({ room, on }) => {
      note(ledger, `set_light ${room} ${on}`);
      return text(`the ${room} light is now ${on ? "on" : "off"}`);
    },
  );
  server.registerTool(
    "lights.dim",
    { description: "Dims the lights.", inputSchema: { level: z.number().int().min(0).max(100) } },
    async ({ level }) => {
      note(ledger, `dim ${level}`);
      return text(`dimmed to ${level}%`);
    },
  );
  server.registerTool("snapshot", { description: "A camera snapshot.", annotations: { readOnlyHint: true } }, async () => ({
    content: [
      { type: "text", text: "front door camera" },
      { type: "image", data: Buffer.alloc(3000).toString("base64"), mimeType: "image/png" },
      { type: "resource_link", uri: "file:///srv/cam/front.png", name: "front.png" },
    ],
  }));
  server.registerTool("huge", { description: "A very long answer.", inputSchema: { mb: z.number() } }, async ({ mb }) =>
    text("x".repeat(mb * 1024 * 1024)),
  );
  server.registerTool("fail", { description: "Always fails." }, async () => ({
    content: [{ type: "text", text: "the device is offline" }],
    isError: true,
  }));
  // A tool without an input schema gets only the request's extra data (signal, id).
  server.registerTool("hang", { description: "Never answers." }, (extra) => {
    note(ledger, "hang started");
    return new Promise((resolve) => {
      extra.signal.addEventListener("abort", () => {
        note(ledger, "hang cancelled");
        resolve(text("cancelled"));
      });
    });
  });
  server.registerTool("crash", { description: "Exits the server." }, async () => {
    note(ledger, "crash");
    process.exit(1);
  });
  server.registerTool("grow", { description: "Adds a tool." }, async () => {
    server.registerTool("extra", { description: "A tool added later." }, async () => text("extra ran"));
    return text("added a tool");
  });
  if (process.env.MCP_COLLIDE) {
    server.registerTool("dup.name", { description: "One of two." }, async () => text("dot"));
    server.registerTool("dup_name", { description: "The other." }, async () => text("underscore"));
  }
  if (write) {
    server.registerTool("garbage", { description: "Answers with garbage." }, (extra) => {
      write("this is not JSON at all");
      write('{"jsonrpc":"1.0","method":42}');
      write(JSON.stringify({ jsonrpc: "2.0", id: extra.requestId, result: { content: "not a list" } }));
      return new Promise(() => {});
    });
    server.registerTool("flood", { description: "Sends one endless line." }, () => {
      const block = "x".repeat(1024 * 1024);
      for (let i = 0; i < 40; i++) process.stdout.write(block);
      return new Promise(() => {});
    });
  }
  return server;
}
