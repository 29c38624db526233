// Writes config/hermes.schema.json from the zod schema, so editors can complete and check hermes.yaml.
// `npm run schema` regenerates it; a test fails when the committed file is stale.
import { writeFileSync } from "node:fs";
import { z } from "zod";
import { configSchema } from "../src/config/schema.js";

export function renderJsonSchema(): string {
  const schema = z.toJSONSchema(configSchema(), { io: "input", unrepresentable: "any", target: "draft-2020-12" }) as Record<
    string,
    unknown
  >;
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  if (props.timezone) delete props.timezone.default;
  return `${JSON.stringify({ ...schema, title: "hermes.yaml", description: "Configuration of the hermes daemon" }, null, 2)}\n`;
}

if (process.argv[1]?.endsWith("export-schema.js")) {
  const target = new URL("../../config/hermes.schema.json", import.meta.url);
  writeFileSync(target, renderJsonSchema());
  console.log(`wrote ${target.pathname}`);
}
