import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { renderSectionDefaults } from "../../scripts/export-schema.js";
import { parseConfig } from "../../src/config/load.js";
import { configSchema } from "../../src/config/schema.js";
import { eagerly, schemasMadeLate } from "../../src/config/sections.js";

const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8");
const ENV = { TELEGRAM_BOT_TOKEN: "123:abc", TELEGRAM_OWNER_ID: "42" };

/** Configs that leave out different sections, and name some of them in part. */
const CONFIGS: Record<string, string> = {
  empty: "",
  "the repository's hermes.yaml": read("../../hermes.yaml"),
  "the morning briefing example": read("../../examples/morning-briefing.yaml"),
  "a few sections in part": stringify({
    timezone: "UTC",
    model: { name: "qwen3:8b", fallbacks: [{ provider: "openai", base_url: "http://127.0.0.1:9/v1", name: "m" }] },
    tools: { enabled: ["clock", "notes", "weather"], weather: { location: "Berlin" } },
    connectors: {
      telegram: { enabled: true, token: "123:abc", allowed_users: [1, { id: 2, name: "bob" }] },
      cron: { jobs: [{ name: "briefing", schedule: "0 7 * * *", prompt: "Morning", deliver: "telegram:1" }] },
      http: { enabled: true, token: "secret-token", hooks: [{ name: "door", prompt: "Someone rang", deliver: "telegram:1" }] },
      plugins: [{ name: "phone", module: "./phone.js" }],
    },
    mcp: { servers: { home: { command: "home-mcp" } } },
    agent: { max_steps: 4 },
  }),
};

describe("config sections a file leaves out", () => {
  it("keeps src/config/section-defaults.ts in step with the schema (run `npm run schema` to refresh)", () => {
    const committed = readFileSync(new URL("../../src/config/section-defaults.ts", import.meta.url), "utf8");
    expect(committed).toBe(renderSectionDefaults());
  });

  for (const [name, text] of Object.entries(CONFIGS)) {
    it(`reads ${name} as the whole schema made at once does`, () => {
      const read = () => parseConfig(text, "/srv/hermes/hermes.yaml", ENV).config;
      expect(read()).toStrictEqual(eagerly(read));
    });
  }

  const MISTAKES: Record<string, unknown> = {
    "out of range": { agent: { max_steps: 0 } },
    "a bad URL in a tool's settings": { tools: { weather: { base_url: "nope" } } },
    "an unknown key": { connectors: { discord: { colour: 1 } } },
    "a section that is null": { context: null },
    "a section of the wrong type": { connectors: { email: "yes" } },
    "a nested section that is null": { connectors: { email: { imap: null } } },
    "an id too large to be exact": { connectors: { discord: { allowed_users: [2 ** 60] } } },
    "a bad entry of a list": { model: { fallbacks: [{ base_url: "localhost:1" }] }, connectors: { cron: { jobs: [{ name: "x" }] } } },
    "a check across sections": { connectors: { telegram: { enabled: true } }, tools: { enabled: ["home__x"] } },
  };
  for (const [name, raw] of Object.entries(MISTAKES)) {
    it(`reports ${name} as the whole schema does`, () => {
      const issues = (schema: ReturnType<typeof configSchema>) =>
        schema.safeParse(raw).error?.issues.map(({ code, path, message }) => ({ code, path, message }));
      expect(issues(configSchema())?.length).toBeGreaterThan(0);
      expect(issues(configSchema())).toStrictEqual(issues(eagerly(configSchema)));
    });
  }

  it("makes the schemas of the sections a file has, and of no other", () => {
    const before = schemasMadeLate();
    configSchema().parse({});
    expect(schemasMadeLate() - before).toBe(0);
    configSchema().parse({ agent: { max_steps: 4 }, connectors: { cron: { jobs: [] } } });
    // agent, connectors and connectors.cron: not the jobs' entries (there are none), nor any other section.
    expect(schemasMadeLate() - before).toBe(3);
  });

  it("gives each config its own copy of a section's defaults", () => {
    const first = configSchema().parse({});
    first.agent.confirm.push("clock");
    first.connectors.telegram.allowed_users.push(1);
    const second = configSchema().parse({});
    expect(second.agent.confirm).toEqual(["shell", "write_file", "send_message"]);
    expect(second.connectors.telegram.allowed_users).toEqual([]);
  });
});
