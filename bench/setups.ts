// The configured variants the start, `ask`, memory and prompt figures are measured with, beside the plain
// daemon: every new door open (MCP, speech, HTTP), and what an owner adds (a plugin, skills, the OpenAI API).
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { DEFAULT_TOOLS } from "../src/config/schema.js";
import { createTempDir } from "../test/helpers/hermes.js";
import { httpEnv, httpSettings } from "../test/helpers/http.js";
import { writeSkill } from "../test/skills/fixture.js";

type Settings = Record<string, unknown>;

export const FAKE_MCP_SERVER = resolve(import.meta.dirname, "../../test/fakes/mcp-stdio-server.mjs");
/** The MCP tools the "every door open" variant enables, beside the default tools. */
export const MCP_TOOLS = ["home__read_state", "home__set_light"];

/**
 * The variant with every new door open: an MCP stdio server (two of its tools enabled), speech, and the
 * HTTP connector, on top of the given settings. Its config reads the HTTP token from `httpEnv`.
 */
export function everyDoor(settings: Settings, modelUrl: string): Settings {
  const connectors = (settings.connectors ?? {}) as Settings;
  return {
    ...settings,
    tools: { enabled: [...DEFAULT_TOOLS, ...MCP_TOOLS] },
    mcp: { servers: { home: { command: process.execPath, args: [FAKE_MCP_SERVER] } } },
    speech: { base_url: `${modelUrl}/v1` },
    connectors: { ...connectors, http: httpSettings() },
  };
}

/** The owner's variant in the rows' names. */
export const OWNER_SETUP = "a plugin, 3 skills and the OpenAI API";

const NTFY_EXAMPLE = resolve(import.meta.dirname, "../../examples/ntfy-connector");
const NTFY_TOKEN = "bench-ntfy-token";

/** Three skills of the size an owner writes: a name, and a sentence of what the skill does and when. */
const SKILLS: Record<string, string> = {
  "plan-trip": "Plan a trip by train with times and prices. Use when the owner wants to travel somewhere.",
  "water-plants": "Remind the owner which plants need water this week. Use when plants or watering come up.",
  "weekly-review": "Go through the week's notes and reminders and list what is left. Use on Sunday evenings.",
};

interface FakeNtfy {
  url: string;
  close(): Promise<void>;
}

export interface OwnerSetup {
  /** `settings` with the plugin, the skills and the OpenAI API added. */
  apply(settings: Settings): Settings;
  /** The environment its config reads (the HTTP token). */
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/**
 * What an owner configures beside the built-in chats: the ntfy example plugin, loaded by path and subscribed
 * to a fake ntfy on 127.0.0.1 (the same the plugin's tests use), three skill folders with the default tools
 * (so the index and the `skill` tool are in the prompt), and the OpenAI-compatible API on the HTTP door.
 */
export async function startOwnerSetup(): Promise<OwnerSetup> {
  const fake = pathToFileURL(join(NTFY_EXAMPLE, "fake-ntfy.js")).href;
  const { startFakeNtfy } = (await import(fake)) as { startFakeNtfy(o: { token: string }): Promise<FakeNtfy> };
  const ntfy = await startFakeNtfy({ token: NTFY_TOKEN });
  const dir = createTempDir();
  const skills = join(dir.path, "skills");
  for (const [name, description] of Object.entries(SKILLS)) writeSkill(skills, name, { description });
  const phone = {
    name: "phone",
    module: join(NTFY_EXAMPLE, "index.js"),
    allowed_users: ["alice"],
    options: { server: ntfy.url, topics: ["hermes-alice"], token: NTFY_TOKEN },
  };
  return {
    apply: (settings) => ({
      ...settings,
      tools: { enabled: [...DEFAULT_TOOLS] },
      skills: { dirs: [skills] },
      connectors: {
        ...((settings.connectors ?? {}) as Settings),
        http: httpSettings([], { openai: { enabled: true } }),
        plugins: [phone],
      },
    }),
    env: httpEnv,
    close: async () => {
      await ntfy.close();
      dir.cleanup();
    },
  };
}
