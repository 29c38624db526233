/** docs/configuration.md's table of keys: each key is one the schema has, with the default the table gives. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/schema.js";

const DOC = readFileSync(join(import.meta.dirname, "../../docs/configuration.md"), "utf8");

/** The table's rows as [keys, defaults]: `a.b`, `a.c` | 1, 2 → [["a.b", "a.c"], ["1", "2"]]. */
function rows(): [string[], string[]][] {
  return DOC.split("\n")
    .filter((l) => /^\| `[a-z]/.test(l))
    .map((l) => {
      const [keys = "", defaults = ""] = l.split(" | ").map((c) => c.replace(/^\| /, ""));
      const names = [...keys.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");
      // `storage.backup.schedule`, `.keep`, `.dir`: a leading dot continues the first key's parent.
      const parent = names[0]?.replace(/\.[^.]+$/, "") ?? "";
      return [names.map((n) => (n.startsWith(".") ? parent + n : n)), names.length > 1 ? defaults.split(/, | \/ /) : [defaults]];
    });
}

/** The value at a dotted path of the defaults; a section that is absent by default (speech) is filled in. */
function valueAt(path: string): unknown {
  const defaults = configSchema().parse({ speech: { base_url: "http://127.0.0.1:1" }, storage: { backup: {} } });
  return path.split(".").reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], defaults);
}

/** A default as the table writes it, or undefined when it is prose ("the system zone", "built in"). */
function documented(text: string): unknown {
  const t = text.trim().replace(/^`|`$/g, "");
  if (/^\d+$/.test(t)) return Number(t);
  if (t === "true" || t === "false") return t === "true";
  if (t === "empty") return "";
  if (/^\[.*\]$/.test(t)) return t.slice(1, -1).split(/,\s*/).filter(Boolean);
  if (text.trim().startsWith("`")) return t;
  return undefined;
}

describe("docs/configuration.md", () => {
  const table = rows().filter(([keys]) => !keys.some((k) => k.includes("<")) && !keys[0]?.startsWith("connectors."));

  it("names only keys the schema has", () => {
    expect(table.length).toBeGreaterThan(40);
    const unknown = table
      .flatMap(([keys]) => keys)
      .filter((k) => valueAt(k) === undefined && !["agent.system_prompt", "storage.backup.schedule", "speech.base_url"].includes(k));
    expect(unknown).toEqual([]);
  });

  it("gives each key the default the schema has", () => {
    const wrong = table.flatMap(([keys, defaults]) =>
      keys.flatMap((key, i) => {
        const want = documented(defaults[i] ?? "");
        return want === undefined || JSON.stringify(valueAt(key)) === JSON.stringify(want)
          ? []
          : [`${key}: doc ${JSON.stringify(want)}, schema ${JSON.stringify(valueAt(key))}`];
      }),
    );
    expect(wrong).toEqual([]);
  });
});
