/**
 * `hermes export` read straight from the database. A database hermes had not set up yet failed with
 * SQLite's "no such table: sessions"; the JSON held each message's tool calls as a string of JSON; a
 * backtick in a call's arguments ended the Markdown's code span early, and a tool result's ``` was changed.
 * `hermes backup` of such a database named its own temporary file as "not one of hermes".
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/store.js";
import { useTempDir } from "../helpers/fixture.js";
import { runCli, writeConfig } from "../helpers/hermes.js";

const settings = (dir: string) => ({ model: { base_url: "http://127.0.0.1:9", name: "m" }, storage: { path: join(dir, "hermes.db") } });

describe("hermes export", () => {
  it("says that a database hermes has not set up yet holds no conversations, and one that is not there too", async () => {
    const dir = useTempDir();
    const config = writeConfig(dir, settings(dir));
    const missing = await runCli(["export", "--config", config]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("holds no conversations yet");
    new Database(join(dir, "hermes.db")).close();
    const empty = await runCli(["export", "--config", config, "--format", "json"]);
    expect(empty.stderr).not.toContain("no such table");
    expect(empty.stderr).toContain("holds no conversations yet");
    expect(empty.code).toBe(1);
  });

  /** A config and a session whose tool call and result hold runs of backticks. */
  function seed() {
    const dir = useTempDir();
    const config = writeConfig(dir, settings(dir));
    const store = openStore(join(dir, "hermes.db"));
    const session = store.history.activeSession("cli:ticks").id;
    store.history.appendMessage(session, null, { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "write_file", args }] });
    store.history.appendMessage(session, null, {
      role: "tool",
      content: "```\nkept ``` as is\n````",
      toolCallId: "c1",
      toolName: "write_file",
    });
    store.close();
    return config;
  }
  const args = { path: "a`b.txt", content: "x ``y`` ```z```" };

  it("writes a message's tool calls as JSON in the JSON, not as a string of JSON", async () => {
    const json = await runCli(["export", "--config", seed(), "--format", "json"]);
    expect(json.code).toBe(0);
    const data = JSON.parse(json.stdout) as { sessions: { messages: { tool_calls: unknown }[] }[] };
    expect(data.sessions[0]?.messages[0]?.tool_calls).toEqual([{ id: "c1", name: "write_file", args }]);
  });

  it("keeps backticks in a call's arguments and in a result inside their code in Markdown, unchanged", async () => {
    const md = await runCli(["export", "--config", seed()]);
    expect(md.code).toBe(0);
    // A code span's fence is longer than every run of backticks inside it (CommonMark), so it holds them all.
    expect(md.stdout).toContain(`*Called write_file* \`\`\`\`${JSON.stringify(args)}\`\`\`\``);
    expect(md.stdout).toContain("*Result of write_file:*\n\n`````\n```\nkept ``` as is\n````\n`````");
  });
});

describe("hermes backup of a stopped hermes", () => {
  it("says a database hermes has not set up yet holds nothing to back up (it named its own .partial file), and one not there too", async () => {
    const dir = useTempDir();
    const config = writeConfig(dir, settings(dir));
    const missing = await runCli(["backup", join(dir, "copy.db"), "--config", config]);
    expect(missing).toMatchObject({
      code: 1,
      stderr: `backup failed: ${join(dir, "hermes.db")} holds nothing to back up yet: hermes sets it up at its first start\n`,
    });
    new Database(join(dir, "hermes.db")).close();
    const empty = await runCli(["backup", join(dir, "copy.db"), "--config", config]);
    expect(empty.stderr).toBe(missing.stderr);
    expect(empty.code).toBe(1);
  });
});
