import { existsSync, readFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel, Turn } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, type Hermes } from "../helpers/hermes.js";

const appendCall = (word: string): Turn => ({ toolCalls: [{ name: "shell", arguments: { command: `echo ${word} >> ledger.txt` } }] });
/** The model repeats the last tool result, so the reply shows what the gate decided. */
const echoResult = (req: { messages: { role: string; content: string }[] }): Turn => ({
  text: `Result: ${req.messages
    .filter((m) => m.role === "tool")
    .map((m) => m.content)
    .join(" | ")}`,
});

function ledger(hermes: Hermes): string[] {
  const path = join(hermes.dir, "data", "files", "ledger.txt");
  return existsSync(path) ? readFileSync(path, "utf8").trim().split("\n") : [];
}

/** Sends an ask over a raw socket and resolves with the ids of `count` approval requests (never answered). */
async function askAndLeavePending(hermes: Hermes, text: string, count = 1): Promise<string[]> {
  const socket = createConnection(hermes.socketPath);
  socket.setEncoding("utf8");
  socket.write(`${JSON.stringify({ v: 1, id: "1", op: "ask", session: "pending", text })}\n`);
  const ids: string[] = [];
  let buffer = "";
  await new Promise<void>((resolve) => {
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (const line of buffer.split("\n").slice(0, -1)) {
        const reply = JSON.parse(line);
        if (reply.event?.type === "approval_requested") ids.push(reply.event.approvalId);
      }
      buffer = buffer.slice(buffer.lastIndexOf("\n") + 1);
      if (ids.length >= count) resolve();
    });
  });
  await hermes.waitForLog((l) => l.msg === "run waiting for approval");
  socket.destroy();
  return ids;
}

function runRow(hermes: Hermes) {
  const db = new Database(hermes.dbPath, { readonly: true });
  try {
    return db.prepare("SELECT status, reply FROM runs WHERE source = 'cli' ORDER BY started_at DESC LIMIT 1").get() as {
      status: string;
      reply: string;
    };
  } finally {
    db.close();
  }
}

describe("confirmation before risky tools", () => {
  let model: FakeModel;
  let hermes: Hermes | undefined;
  const start = async (agent: Record<string, unknown> = {}) => {
    const base = baseSettings(model.url);
    hermes = await useHermes({ ...base, agent: { confirm_timeout_s: 600, ...agent }, tools: { enabled: ["clock", "shell"] } });
    return hermes;
  };
  beforeEach(async () => {
    model = await useModel();
    model.respond(echoResult);
  });

  it("runs the call once with --yes", async () => {
    model.script(appendCall("one"));
    const h = await start();
    const result = await h.ask("append one", "--yes");
    expect(result.stdout).toMatch(/^Result: exit code 0/);
    expect(result.stderr).toContain("hermes wants to run shell");
    expect(result.stderr).toMatch(/within 10 minutes it will not run/);
    expect(ledger(h)).toEqual(["one"]);
    const audit = await h.cli(["audit"]);
    expect(audit.stdout).toMatch(/shell .*approved by cli/);
  });

  it("does not run the call with --no, and the model hears it was denied", async () => {
    model.script(appendCall("two"));
    const h = await start();
    const result = await h.ask("append two", "--no");
    expect(result.stdout).toMatch(/^Result: the user denied this call/);
    expect(ledger(h)).toEqual([]);
  });

  it("denies without a terminal and without a flag", async () => {
    model.script(appendCall("three"));
    const h = await start();
    const result = await h.ask("append three");
    expect(result.stderr).toContain("no terminal to ask");
    expect(ledger(h)).toEqual([]);
  });

  it("keeps a pending approval through SIGKILL; approving after the restart runs the call exactly once", async () => {
    model.script({ toolCalls: [{ name: "shell", arguments: { command: "echo four >> ledger.txt # \u202Etxt.exe" } }] });
    const h = await start();
    const [id] = await askAndLeavePending(h, "append four");
    await h.kill();
    hermes = await h.restart();
    const list = await hermes.cli(["approvals", "list"]);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain("echo four >> ledger.txt");
    expect(list.stdout).toContain("<U+202E>"); // the word's override, shown, not obeyed
    const approve = await hermes.cli(["approvals", "approve", String(id)]);
    expect(approve.code).toBe(0);
    await hermes.waitForLog((l) => l.msg === "run ended" && l.session === "cli:pending");
    expect(ledger(hermes)).toEqual(["four"]);
    expect(runRow(hermes)).toMatchObject({ status: "done", reply: expect.stringMatching(/^Result: exit code 0/) });
    const again = await hermes.cli(["approvals", "approve", String(id)]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already approved by cli/);
    expect(ledger(hermes)).toEqual(["four"]);
  });

  it("expires an unanswered request: not run, the user told, a late approval refused", async () => {
    model.script(appendCall("five"));
    const h = await start({ confirm_timeout_s: 1 });
    const [id] = await askAndLeavePending(h, "append five");
    await h.waitForLog((l) => l.msg === "run ended");
    expect(runRow(h).reply).toMatch(/nobody answered the confirmation request in time/);
    const late = await h.cli(["approvals", "approve", String(id)]);
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/expired/);
    expect(ledger(h)).toEqual([]);
    const audit = await h.cli(["audit"]);
    expect(audit.stdout).toMatch(/shell .*expired by timeout/);
  });

  it("says so when an unknown approval id is decided", async () => {
    const h = await start();
    const result = await h.cli(["approvals", "approve", "nope"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("there is no approval nope");
  });
});
