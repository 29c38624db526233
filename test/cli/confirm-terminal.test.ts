/**
 * Confirmations asked [y/N] on a terminal. `hermes ask` read its answer from a stream of /dev/tty that left a
 * read pending: it waited for one more Enter before it exited, and took the answer to a second confirmation
 * (which stayed pending until it expired). Two gated calls of one step asked two questions at once, and
 * `hermes chat` never asked the second.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, onTestFailed, onTestFinished } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, type Hermes } from "../helpers/hermes.js";
import { type Terminal, terminal } from "../helpers/terminal.js";

/** Not anchored at a line's end: what the run prints next (the step's second call) may follow on the same line. */
const QUESTION = /Run it\? \[y\/N\] /;
const write = (path: string) => ({ name: "write_file", arguments: { path, content: path } });

describe("confirmations asked [y/N] on a terminal", () => {
  let model: FakeModel;
  let hermes: Hermes;
  beforeEach(async () => {
    model = await useModel();
    hermes = await useHermes(baseSettings(model.url));
  });
  const written = (name: string) => existsSync(join(hermes.dir, "data", "files", name));
  const open = (args: string[]): Terminal => {
    const t = terminal(args, { HERMES_CONFIG: hermes.configPath, COLUMNS: "200" }, hermes.dir);
    onTestFailed(() => console.log(t.output()));
    onTestFinished(() => t.kill());
    return t;
  };

  it("hermes ask: exits once the reply is printed after one answered confirmation", async () => {
    model.script({ toolCalls: [write("a.txt")] }, { text: "written" });
    const ask = open(["ask", "write a file"]);
    await ask.expect(QUESTION);
    ask.type("y");
    await ask.expect(/written/);
    expect(await ask.exit).toBe(0);
    expect(written("a.txt")).toBe(true);
  });

  it("hermes ask: the answer to a run's second confirmation is taken, and both calls run", async () => {
    model.script({ toolCalls: [write("a.txt")] }, { toolCalls: [write("b.txt")] }, { text: "both written" });
    const ask = open(["ask", "write two files"]);
    await ask.expect(/a\.txt[\s\S]*Run it\? \[y\/N\] /);
    ask.type("y");
    await ask.expect(/b\.txt[\s\S]*Run it\? \[y\/N\] /);
    ask.type("y");
    await ask.expect(/both written/);
    expect(await ask.exit).toBe(0);
    expect(written("a.txt") && written("b.txt")).toBe(true);
  });

  it("hermes ask: two gated calls of one step are asked one after the other", async () => {
    model.script({ toolCalls: [write("a.txt"), write("b.txt")] }, { text: "both written" });
    const ask = open(["ask", "write two files"]);
    await ask.expect(/a\.txt[\s\S]*Run it\? \[y\/N\] /);
    ask.type("n");
    await ask.expect(/b\.txt[\s\S]*Run it\? \[y\/N\] /);
    ask.type("y");
    await ask.expect(/both written/);
    expect(await ask.exit).toBe(0);
    expect([written("a.txt"), written("b.txt")]).toEqual([false, true]);
  });

  it("hermes ask: Ctrl-C at the question ends the command, and the call does not run", async () => {
    model.script({ toolCalls: [write("a.txt")] }, { text: "written" });
    const ask = open(["ask", "write a file"]);
    await ask.expect(QUESTION);
    ask.keys("\u0003");
    const ended = await Promise.race([ask.exit.then(() => "ended"), new Promise((r) => setTimeout(() => r("still running"), 5000))]);
    expect(ended).toBe("ended");
    expect(written("a.txt")).toBe(false);
  });

  it("hermes chat: asks for each of two gated calls of one step, and both run", async () => {
    model.script({ toolCalls: [write("a.txt"), write("b.txt")] }, { text: "both written" });
    const chat = open(["chat", "--session", "two"]);
    await chat.expect(/you › $/m);
    chat.type("write two files");
    await chat.expect(/a\.txt[\s\S]*Run it\? \[y\/N\] /);
    chat.type("y");
    await chat.expect(/b\.txt[\s\S]*Run it\? \[y\/N\] /);
    chat.type("y");
    await chat.expect(/both written[\s\S]*you › $/m);
    expect(written("a.txt") && written("b.txt")).toBe(true);
  });
});
