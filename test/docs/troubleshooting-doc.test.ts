/** docs/troubleshooting.md as its reader uses it: every message it quotes is one hermes can print. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const DOC = readFileSync(join(ROOT, "docs/troubleshooting.md"), "utf8");

/** Quoted text that names a command or a setting rather than quoting a message. */
const NOT_MESSAGES = /^(hermes( \w+)?|\/\w+|curl .*|[a-z_]+\.[a-z_.]+)$/;
/** Example values the doc shows where the code fills one in (an MCP server's name, where a window was read). */
const EXAMPLES = [/(?<=server )home(?= is not connected)/, /llama\.cpp \/props n_ctx(?= says)/];

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });

const SOURCE = ["src", "connectors", "tools"].flatMap((d) => sourceFiles(join(ROOT, d)).map((f) => readFileSync(f, "utf8"))).join("\n");

/** The quotes of the symptom column: `code` and "text". */
function quotedSymptoms(): string[] {
  const rows = DOC.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| symptom"));
  return rows.flatMap((row) => [...(row.split(" | ")[0] ?? "").matchAll(/`([^`]+)`|"([^"]+)"/g)].map((m) => m[1] ?? m[2] ?? ""));
}

/**
 * The longest part of a quote the code must hold as it is: between what it fills in (…, with a path
 * or name joined to it), placeholders (N, M, L:C), numbers and parentheses.
 */
function fixedPart(quote: string): string {
  const text = EXAMPLES.reduce((q, example) => q.replace(example, "…"), quote);
  const parts = text.split(/…\S*|\b(?:N|M|L:C|\d+)\b|[()]/).map((p) => p.replace(/^[\s!:]+|[\s~]+$/g, ""));
  return parts.reduce((a, b) => (b.length > a.length ? b : a), "");
}

describe("docs/troubleshooting.md", () => {
  it("quotes only messages the code prints", () => {
    const quotes = quotedSymptoms().filter((q) => !NOT_MESSAGES.test(q));
    expect(quotes.length).toBeGreaterThan(15);
    expect(quotes.filter((q) => !SOURCE.includes(fixedPart(q)))).toEqual([]);
    expect(SOURCE.includes(fixedPart("the bot token was refused by Telegram (HTTP 401)"))).toBe(false);
  });
});
