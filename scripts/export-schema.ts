// Writes config/hermes.schema.json from the zod schema, so editors can complete and check hermes.yaml, and
// src/config/section-defaults.ts, what each section is when a file leaves it out (src/config/sections.ts).
// `npm run schema` regenerates both; a test fails when a committed one is stale.
import { writeFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { configSchema } from "../src/config/schema.js";
import { eagerly, sectionDefaults } from "../src/config/sections.js";

export function renderJsonSchema(): string {
  const schema = z.toJSONSchema(eagerly(configSchema), { io: "input", unrepresentable: "any", target: "draft-2020-12" }) as Record<
    string,
    unknown
  >;
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  if (props.timezone) delete props.timezone.default;
  return `${JSON.stringify({ ...schema, title: "hermes.yaml", description: "Configuration of the hermes daemon" }, null, 2)}\n`;
}

/** The sections' defaults as a module; a default JSON cannot carry as it is (a Date, a URL, an undefined key) is refused. */
export function renderSectionDefaults(): string {
  const defaults = sectionDefaults(configSchema);
  const json = JSON.stringify(defaults, null, 2);
  for (const [name, value] of Object.entries(defaults)) {
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(value)), value))
      throw new Error(`${name}: its defaults do not survive JSON as they are`);
  }
  return [
    "// Written by `npm run schema` (scripts/export-schema.ts): what each section of hermes.yaml is when the file leaves",
    "// it out (src/config/sections.ts). A test fails when it is stale.",
    `export const SECTION_DEFAULTS: Record<string, unknown> = ${json};`,
    "",
  ].join("\n");
}

if (process.argv[1]?.endsWith("export-schema.js")) {
  for (const [path, text] of [
    ["../../config/hermes.schema.json", renderJsonSchema()],
    ["../../src/config/section-defaults.ts", renderSectionDefaults()],
  ] as const) {
    const target = new URL(path, import.meta.url);
    writeFileSync(target, text);
    console.log(`wrote ${target.pathname}`);
  }
}
