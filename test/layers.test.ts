import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, posix, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useTempDir } from "./helpers/fixture.js";

const ROOT = resolve(import.meta.dirname, "..");
const BIOME = join(ROOT, "node_modules/.bin/biome");
const RULE = "lint/style/noRestrictedImports";

/**
 * The layers, low to high, as docs/architecture.md states them: where a layer's files live, and modules
 * of it another file may import. A file imports from its own layer or a lower one, never a higher one.
 */
const LAYERS = [
  { name: "base", files: ["src/a.ts", "src/net/a.ts"], modules: ["src/errors.ts", "src/net/sleep.ts"] },
  { name: "config", files: ["src/config/a.ts"], modules: ["src/config/schema.ts"] },
  { name: "model", files: ["src/model/a.ts"], modules: ["src/model/types.ts"] },
  { name: "store", files: ["src/store/a.ts"], modules: ["src/store/store.ts"] },
  {
    name: "tools",
    files: ["src/tools/a.ts", "tools/a.ts", "src/mcp/a.ts", "src/skills/a.ts", "src/media/a.ts"],
    modules: ["src/tools/types.ts", "tools/clock.ts", "src/mcp/hub.ts", "src/skills/types.ts", "src/media/types.ts"],
  },
  { name: "gate", files: ["src/gate/a.ts"], modules: ["src/gate/gate.ts"] },
  { name: "agent", files: ["src/agent/a.ts"], modules: ["src/agent/types.ts"] },
  {
    name: "connectors",
    files: ["src/connector.ts", "connectors/a.ts", "connectors/cli/a.ts", "connectors/cron/a.ts"],
    modules: ["src/connector.ts", "connectors/cli/index.ts", "connectors/cron/scheduled.ts", "connectors/sdk/types.ts"],
  },
  { name: "daemon", files: ["src/daemon/a.ts"], modules: ["src/daemon/daemon.ts"] },
  { name: "kit", files: ["connectors/kit/a.ts"], modules: ["connectors/kit/run.ts"] },
  { name: "cli", files: ["src/cli/a.ts"], modules: ["src/cli/main.ts"] },
];

/** The specifier a file at `from` writes to import the module at `to` (`../agent/types.js`). */
function specifier(from: string, to: string): string {
  const path = posix.relative(posix.dirname(from), to).replace(/\.ts$/, ".js");
  return path.startsWith(".") ? path : `./${path}`;
}

/** A temp copy of the lint set-up (biome.json) holding `files`. */
function lintSetup(files: Record<string, string>): string {
  const dir = useTempDir("hermes-layers-");
  copyFileSync(join(ROOT, "biome.json"), join(dir, "biome.json"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function biome(dir: string, args: string[]): { status: number | null; output: string } {
  const run = spawnSync(BIOME, [...args, "--max-diagnostics=none", "--colors=off"], { cwd: dir, encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe("the layers, enforced by lint", () => {
  it("fails the biome step of npm run check on an upward import, naming the rule, and passes the same import downward", () => {
    const upward = lintSetup({
      "src/gate/upward.ts": 'import type { AgentEvent } from "../agent/types.js";\n\nexport type Seen = AgentEvent;\n',
    });
    const failed = biome(upward, ["check", "."]);
    expect(failed.status).not.toBe(0);
    expect(failed.output).toContain(RULE);
    expect(failed.output).toContain("src/gate/upward.ts");
    expect(failed.output).toContain("gate imports only from its own layer and below");

    const downward = lintSetup({
      "src/agent/downward.ts": 'import type { GateEvent } from "../gate/types.js";\n\nexport type Seen = GateEvent;\n',
    });
    const passed = biome(downward, ["check", "."]);
    expect(passed.output).not.toContain(RULE);
    expect(passed.status).toBe(0);
  });

  it("flags exactly the imports from a higher layer, from every folder of every layer, and gate/invoke.js outside the gate", () => {
    const rank = (module: string) => LAYERS.findIndex((l) => l.modules.includes(module));
    const targets = [...LAYERS.flatMap((l) => l.modules), "src/gate/invoke.ts"];
    const files: Record<string, string> = {};
    const expected: string[] = [];
    for (const [level, layer] of LAYERS.entries()) {
      for (const file of layer.files) {
        const imports = targets.filter((to) => to !== file);
        const lines = imports.map((to, i) => `import * as m${i} from "${specifier(file, to)}";`);
        files[file] = `${lines.join("\n")}\n\nexport const all = [${imports.map((_, i) => `m${i}`).join(", ")}];\n`;
        imports.forEach((to, i) => {
          const upward = to === "src/gate/invoke.ts" ? layer.name !== "gate" : rank(to) > level;
          if (upward) expected.push(`${file}:${i + 1} ${specifier(file, to)}`);
        });
      }
    }
    const dir = lintSetup(files);
    const { output } = biome(dir, ["lint", "--reporter=github", "--only=style/noRestrictedImports", "."]);
    // ::error title=lint/style/noRestrictedImports,file=src/gate/a.ts,line=7,…
    // A line two patterns match (the gate's own rule and a layer's) is reported twice: counted once.
    const flagged = new Set(
      [...output.matchAll(/title=lint\/style\/noRestrictedImports,file=([^,]+),line=(\d+)/g)].map(([, path, line]) => {
        const file = relative(dir, path as string);
        const text = files[file]?.split("\n")[Number(line) - 1] ?? "";
        return `${file}:${line} ${text.match(/from "([^"]+)"/)?.[1]}`;
      }),
    );
    expect(expected.length).toBeGreaterThan(100);
    expect([...flagged].sort()).toEqual(expected.sort());
  });
});
