import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { startFakeModel } from "../fakes/model-server.js";
import { baseSettings, createTempDir, startHermes } from "../helpers/hermes.js";
import { stoppedAfterEach } from "../helpers/per-test.js";

const RECORDER = resolve(import.meta.dirname, "../fixtures/footprint/record-modules.cjs");

describe("what a daemon loads", () => {
  const held = stoppedAfterEach();

  it("runs from its bundle, without node:crypto, https, tls or dns, through a question and a tool call", async () => {
    const model = await startFakeModel();
    held.model = model;
    model.script({ toolCalls: [{ name: "clock", arguments: {} }] }, { text: "It is late." });
    const dir = createTempDir();
    const out = join(dir.path, "modules.json");
    const hermes = await startHermes(baseSettings(model.url), {
      dir: dir.path,
      env: { NODE_OPTIONS: `--require ${RECORDER}`, HERMES_TEST_MODULES: out },
    });
    held.hermes = hermes;
    expect((await hermes.ask("what time is it?")).stdout).toBe("It is late.\n");
    // The run's id, the call's id and the result's fingerprint were all made.
    expect(model.requests[1]?.messages.some((m) => m.role === "tool")).toBe(true);
    expect(await hermes.stop()).toBe(0);
    held.hermes = undefined;

    const loaded = JSON.parse(readFileSync(out, "utf8")) as { builtins: string[]; files: string[] };
    // pino, better-sqlite3 and their dependencies are in the bundle; only the SQLite addon is a file of its own.
    const outside = loaded.files.filter((f) => f.includes("/node_modules/"));
    expect(outside.map((f) => f.replace(/.*\/node_modules\//, ""))).toEqual(["better-sqlite3/build/Release/better_sqlite3.node"]);
    // Each of these sets up OpenSSL, c-ares or TLS: megabytes of memory for a daemon that talks to
    // Ollama over plain HTTP on its own machine.
    for (const name of ["crypto", "https", "tls", "dns"]) expect(loaded.builtins).not.toContain(`NativeModule ${name}`);
  });
});
