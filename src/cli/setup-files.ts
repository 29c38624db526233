import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { parseEnv } from "node:util";
import { type Document, parseDocument } from "yaml";
import { DEFAULT_TOOLS, type ToolName } from "../config/tool-names.js";

/**
 * What setup enables besides the schema's default tools. `memory` (facts about the owner, shown at the
 * start of every run) has always been on in a config setup writes, though a hand-written config without
 * `tools.enabled` goes without it; setup keeps it on rather than change what it gives a new owner.
 */
const SETUP_EXTRA_TOOLS: ToolName[] = ["memory"];

/** The defaults first, so a tool added to them reaches a config written by setup too. */
const FRESH_TOOLS = [...new Set([...DEFAULT_TOOLS, ...SETUP_EXTRA_TOOLS])];

/** The config `hermes setup` starts from when there is none: the defaults, with room for what it asks. */
const FRESH = `# hermes configuration
# Written by \`hermes setup\`; edit freely (a re-run changes only what it asks about). Secrets live in
# hermes.env beside this file and are read as \${VAR}. Reference: docs/configuration.md
model:
  provider: ollama
tools:
  enabled: [${FRESH_TOOLS.join(", ")}]
storage:
  path: ./data/hermes.db
connectors:
  cli: { enabled: true }
`;

export function readConfigDoc(path: string): Document {
  const doc = parseDocument(existsSync(path) ? readFileSync(path, "utf8") : FRESH);
  if (doc.errors.length > 0) throw new Error(`${path} does not parse (${doc.errors[0]?.message.split("\n")[0]}); fix it or move it away`);
  return doc;
}

export function writeConfigDoc(path: string, doc: Document): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, doc.toString({ lineWidth: 0 }));
}

/**
 * Sets secrets in the environment file (KEY=value lines), keeping its other lines. A new file is 0600; one
 * that was there keeps its mode, owner and group, less anything it granted to others: deploy/install.sh
 * makes it 0640 root:hermes, so that the service's user can read it (`sudo -u hermes hermes doctor`), and a
 * `sudo hermes setup` must not take that away. Returns the file's mode.
 */
export function writeEnvFile(path: string, values: Record<string, string>): number {
  const before = statSync(path, { throwIfNoEntry: false });
  const mode = before ? before.mode & 0o770 : 0o600;
  const lines = before
    ? readFileSync(path, "utf8").split("\n")
    : ["# secrets for hermes (read as ${VAR} in hermes.yaml); keep this file 0600"];
  for (const [key, value] of Object.entries(values)) {
    const line = `${key}=${value}`;
    const at = lines.findIndex((l) => Object.keys(parseEnv(l)).includes(key));
    if (at >= 0) lines[at] = line;
    else lines.splice(lines.at(-1) === "" ? lines.length - 1 : lines.length, 0, line);
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const text = `${lines.join("\n").replace(/\n*$/, "")}\n`;
  writeFileSync(path, text, { mode });
  chmodSync(path, mode);
  return mode;
}

export function readEnvFile(path: string): Record<string, string> {
  try {
    return parseEnv(readFileSync(path, "utf8")) as Record<string, string>;
  } catch {
    return {};
  }
}
