// The skills' cost in the first request: none when there are no skills, at most the index cap with twenty.
import { join } from "node:path";
import { DEFAULT_TOOLS } from "../src/config/schema.js";
import { startFakeModel } from "../test/fakes/model-server.js";
import { baseSettings, createTempDir, startHermes } from "../test/helpers/hermes.js";
import { writeManySkills } from "../test/skills/fixture.js";
import { record } from "./figures.js";

const INDEX_MAX_TOKENS = 300;

/** First requests for "hello": default tools without `skill`; with it and no skills; with it and twenty skills. */
export async function skillsPromptSize(): Promise<void> {
  const model = await startFakeModel();
  const dir = createTempDir();
  const first = async (tools: string[], skills: boolean) => {
    const hermes = await startHermes(
      {
        ...baseSettings(model.url),
        tools: { enabled: tools },
        skills: { dirs: [skills ? join(dir.path, "skills") : join(dir.path, "none")] },
      },
      {},
    );
    const before = model.requests.length;
    await hermes.ask("hello");
    await hermes.stop();
    const req = model.requests[before];
    const system = req?.messages.find((m) => m.role === "system")?.content ?? "";
    const skillSpec = req?.tools.find((t) => t.function?.name === "skill");
    return {
      bytes: Buffer.byteLength(JSON.stringify({ messages: req?.messages, tools: req?.tools })),
      systemChars: system.length,
      specBytes: skillSpec ? Buffer.byteLength(JSON.stringify(skillSpec)) + 1 : 0,
    };
  };
  const without = await first(
    DEFAULT_TOOLS.filter((t) => t !== "skill"),
    false,
  );
  const none = await first([...DEFAULT_TOOLS], false);
  writeManySkills(join(dir.path, "skills"), 20, 200);
  const twenty = await first([...DEFAULT_TOOLS], true);
  record({
    name: "skills: none configured, first request growth",
    value: none.bytes - without.bytes,
    unit: "bytes",
    target: { op: "<=", value: 0 },
  });
  record({
    name: "  … 20 skills: system prompt growth (the index)",
    value: twenty.systemChars - without.systemChars,
    unit: "chars",
    target: { op: "<=", value: INDEX_MAX_TOKENS * 4 },
    floor: `the cap: index_max_tokens ${INDEX_MAX_TOKENS} × 4 characters`,
  });
  record({ name: "  … 20 skills: the skill tool's signature", value: twenty.specBytes, unit: "bytes" });
  // The default request has ~25 bytes to spare under its 4,000: the signature comes only with skills to read.
  record({ name: "  … default tools plus that signature", value: without.bytes + twenty.specBytes, unit: "bytes" });
  record({ name: "  … 20 skills: whole first request", value: twenty.bytes, unit: "bytes" });
  dir.cleanup();
  await model.close();
}
