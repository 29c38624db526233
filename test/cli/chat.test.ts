import { spawn } from "node:child_process";
import { stripVTControlCharacters } from "node:util";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, CLI, type Hermes } from "../helpers/hermes.js";

/** `hermes chat` on a real terminal: python's pty module gives it one, so Ctrl-C is a key readline reads. */
function chatOnTerminal(hermes: Hermes, session: string) {
  const pty = "import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)";
  const child = spawn("python3", ["-c", pty, process.execPath, CLI, "chat", "--session", session], {
    cwd: hermes.dir,
    env: { ...process.env, HERMES_CONFIG: hermes.configPath, COLUMNS: "200" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  let screen = "";
  const waiters: { match: RegExp; from: number; resolve: () => void }[] = [];
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    screen += stripVTControlCharacters(chunk);
    for (const w of waiters.filter((w) => w.match.test(screen.slice(w.from)))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return {
    screen: () => screen,
    /** Resolves once `match` shows up after what is on screen now. */
    expect: (match: RegExp) => {
      const from = screen.length;
      return { seen: new Promise<void>((resolve) => waiters.push({ match, from, resolve })) };
    },
    type: (keys: string) => child.stdin.write(keys),
    exited,
  };
}

describe("hermes chat", () => {
  let model: FakeModel;
  let hermes: Hermes;
  beforeEach(async () => {
    model = await useModel();
    hermes = await useHermes(baseSettings(model.url));
  });

  it("stops a streaming answer at once on Ctrl-C and on /stop, and answers an unknown /command with the list", async () => {
    model.script({ text: "an endless answer", hangAfterText: true }, { text: "another endless one", hangAfterText: true });
    const chat = chatOnTerminal(hermes, "t");
    await chat.expect(/you › $/).seen;
    let next = chat.expect(/an endless answer/);
    chat.type("tell me everything\r");
    await next.seen;
    next = chat.expect(/\(stopped\)[\s\S]*you › $/);
    chat.type("\x03"); // Ctrl-C
    await next.seen;

    next = chat.expect(/another endless one/);
    chat.type("and more\r");
    await next.seen;
    next = chat.expect(/\(stopped\)[\s\S]*you › $/);
    chat.type("/stop\r");
    await next.seen;

    next = chat.expect(/unknown command \/frobnicate; commands: \/new, \/compact, \/stop, \/exit/);
    chat.type("/frobnicate now\r");
    await next.seen;
    chat.type("/exit\r");
    expect(await chat.exited).toBe(0);
    // Two runs reached the model; the unknown command did not.
    expect(model.requests).toHaveLength(2);
    const runs = await hermes.cli(["sessions", "show", "cli:t"]);
    expect(runs.stdout).not.toContain("frobnicate");
  }, 30_000);
});
