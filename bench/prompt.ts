// The first request's size: what the model reads for "hello" before it can answer, with the default tools,
// with every door open, with what an owner configures, and with every tool.
import { TOOL_NAMES } from "../src/config/schema.js";
import { promptTokens } from "../src/model/tokens.js";
import { type RecordedRequest, startFakeModel } from "../test/fakes/model-server.js";
import { baseSettings, startHermes } from "../test/helpers/hermes.js";
import { httpEnv } from "../test/helpers/http.js";
import { record } from "./figures.js";
import { everyDoor, MCP_TOOLS, OWNER_SETUP, startOwnerSetup } from "./setups.js";

const FIRST_REQUEST_TARGET = 4000;

type Tool = RecordedRequest["tools"][number];
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
/** A tool's share of the request: its spec and the comma before it. */
const toolBytes = (tools: Tool[]) => tools.reduce((sum, t) => sum + bytesOf(t) + 1, 0);

/** The first request's size, the MCP tools' and the skill tool's specs in it, and the system prompt's length. */
function sizes(req: RecordedRequest | undefined) {
  const tools = req?.tools ?? [];
  const mcp = tools.filter((t) => MCP_TOOLS.includes(t.function?.name ?? ""));
  return {
    bytes: bytesOf({ messages: req?.messages, tools }),
    mcpBytes: toolBytes(mcp),
    mcpCount: mcp.length,
    skillBytes: toolBytes(tools.filter((t) => t.function?.name === "skill")),
    systemBytes: bytesOf(req?.messages.find((m) => m.role === "system")?.content ?? ""),
    tokens: promptTokens(req?.messages as never, tools.map((t) => t.function) as never),
  };
}

/** What the owner's setup adds to the first request: the skills index, the skill tool, and anything else. */
function ownerGrowth(owned: ReturnType<typeof sizes>, base: ReturnType<typeof sizes>): string {
  const growth = owned.bytes - base.bytes;
  const index = owned.systemBytes - base.systemBytes;
  return `grows by ${growth}: the skills index ${index} in the system prompt, the skill tool's spec ${owned.skillBytes}, the rest ${growth - index - owned.skillBytes}`;
}

export async function promptSize(): Promise<void> {
  const model = await startFakeModel();
  const first = async (settings: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => {
    const hermes = await startHermes(settings, { env });
    const before = model.requests.length;
    await hermes.ask("hello");
    await hermes.stop();
    return sizes(model.requests[before]);
  };
  const base = await first(baseSettings(model.url));
  record({
    name: 'first request for "hello", default tools',
    value: base.bytes,
    unit: "bytes",
    target: { op: "<=", value: FIRST_REQUEST_TARGET },
  });
  record({ name: "  … estimated tokens, default tools", value: base.tokens, unit: "tokens" });
  const door = await first(everyDoor(baseSettings(model.url), model.url), httpEnv);
  record({
    name: "  … with MCP, speech and HTTP: growth",
    value: door.bytes - base.bytes,
    unit: "bytes",
    target: { op: "<=", value: door.mcpCount === MCP_TOOLS.length ? door.mcpBytes : 0 },
    floor: `the target is the ${door.mcpCount} enabled MCP tools' own specs`,
  });
  const owner = await startOwnerSetup();
  const owned = await first(owner.apply(baseSettings(model.url)), owner.env);
  await owner.close();
  // The skills' index and the skill tool are what the owner's skills cost, by design (SPEC §19 caps the index);
  // everything else the owner adds (a plugin, the OpenAI API) must leave the request as it was.
  const index = owned.systemBytes - base.systemBytes;
  record({ name: `  … with ${OWNER_SETUP}`, value: owned.bytes, unit: "bytes", floor: ownerGrowth(owned, base) });
  record({
    name: "    … growth besides the skills' index and tool",
    value: owned.bytes - base.bytes - index - owned.skillBytes,
    unit: "bytes",
    target: { op: "<=", value: 0 },
  });
  const every = await first({ ...baseSettings(model.url), tools: { enabled: [...TOOL_NAMES], web_search: { url: model.url } } });
  record({ name: 'first request for "hello", every tool', value: every.bytes, unit: "bytes" });
  record({ name: "  … estimated tokens, every tool", value: every.tokens, unit: "tokens" });
  await model.close();
}
