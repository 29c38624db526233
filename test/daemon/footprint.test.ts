import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: the example is JavaScript without types
import { startFakeNtfy } from "../../examples/ntfy-connector/fake-ntfy.js";
import { startFakeModel } from "../fakes/model-server.js";
import { moduleRecorder, packageFiles } from "../helpers/footprint.js";
import { baseSettings, createTempDir, startHermes } from "../helpers/hermes.js";
import { baseUrlOf, httpEnv, httpSettings } from "../helpers/http.js";
import { stoppedAfterEach } from "../helpers/per-test.js";
import { waitFor } from "../helpers/wait.js";

const STDIO_SERVER = resolve(import.meta.dirname, "../fakes/mcp-stdio-server.mjs");
const NTFY_PLUGIN = resolve(import.meta.dirname, "../../examples/ntfy-connector/index.js");

/** Starts a daemon that records what it loaded; `finish` stops it and reads the record. */
async function recorded(settings: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  const dir = createTempDir();
  const recorder = moduleRecorder(dir.path);
  const hermes = await startHermes(settings, { dir: dir.path, env: { ...env, ...recorder.env } });
  const finish = async () => {
    expect(await hermes.stop()).toBe(0);
    return recorder.read();
  };
  return { hermes, finish };
}

const UNDICI = "NativeModule internal/deps/undici/undici";

describe("what a daemon loads", () => {
  const held = stoppedAfterEach();

  it("runs from its bundle, without node:crypto, https, tls or dns, through a question and a tool call", async () => {
    const model = await startFakeModel();
    held.model = model;
    model.script({ toolCalls: [{ name: "clock", arguments: {} }] }, { text: "It is late." });
    const { hermes, finish } = await recorded(baseSettings(model.url));
    held.hermes = hermes;
    expect((await hermes.ask("what time is it?")).stdout).toBe("It is late.\n");
    // The run's id, the call's id and the result's fingerprint were all made.
    expect(model.requests[1]?.messages.some((m) => m.role === "tool")).toBe(true);
    held.hermes = undefined;
    const loaded = await finish();
    // pino, better-sqlite3 and their dependencies are in the bundle; only the SQLite addon is a file of its own.
    expect(packageFiles(loaded)).toEqual(["better-sqlite3/build/Release/better_sqlite3.node"]);
    // Each of these sets up OpenSSL, c-ares or TLS: megabytes of memory for a daemon that talks to
    // Ollama over plain HTTP on its own machine.
    for (const name of ["crypto", "https", "tls", "dns"]) expect(loaded.builtins).not.toContain(`NativeModule ${name}`);
  });

  it("with an MCP stdio server, speech and the HTTP door configured, loads fetch and node:crypto only for the door's first request", async () => {
    const model = await startFakeModel();
    held.model = model;
    model.respond(() => ({ text: "ok" }));
    const settings = {
      ...baseSettings(model.url),
      mcp: { servers: { home: { command: process.execPath, args: [STDIO_SERVER] } } },
      speech: { base_url: `${model.url}/v1` },
      connectors: { cli: { enabled: true }, http: httpSettings() },
    };
    const quiet = await recorded(settings, httpEnv);
    held.hermes = quiet.hermes;
    expect((await quiet.hermes.ask("hello")).stdout).toBe("ok\n");
    const before = await quiet.finish();
    // hono's Node server stands on fetch's Request and Response: undici, TLS, HTTP/2, zlib.
    for (const name of [UNDICI, "NativeModule crypto", "NativeModule tls", "NativeModule http2"])
      expect(before.builtins).not.toContain(name);

    const knocked = await recorded(settings, httpEnv);
    held.hermes = knocked.hermes;
    const res = await fetch(`${await baseUrlOf(knocked.hermes)}/healthz`);
    expect(res.status).toBe(200);
    const after = await knocked.finish();
    held.hermes = undefined;
    expect(after.builtins).toContain(UNDICI);
  });

  it("with the example ntfy plugin and the OpenAI API configured, answers on ntfy without loading fetch", async () => {
    const model = await startFakeModel();
    held.model = model;
    model.respond(() => ({ text: "ok" }));
    const ntfy = (await startFakeNtfy({ token: "t" })) as { url: string; messages: { title?: string }[]; close(): Promise<void> };
    const phone = {
      name: "phone",
      module: NTFY_PLUGIN,
      allowed_users: ["alice"],
      options: { server: ntfy.url, topics: ["inbox"], token: "t" },
    };
    const settings = {
      ...baseSettings(model.url),
      connectors: { http: httpSettings([], { openai: { enabled: true } }), plugins: [phone] },
    };
    const { hermes, finish } = await recorded(settings, httpEnv);
    held.hermes = hermes;
    await fetch(`${ntfy.url}/inbox`, { method: "POST", headers: { Authorization: "Bearer t", Title: "alice" }, body: "hello" });
    await waitFor(() => ntfy.messages.some((m) => m.title === "hermes"), { message: "hermes' reply on the ntfy topic" });
    held.hermes = undefined;
    const loaded = await finish();
    await ntfy.close();
    // Node's fetch (undici, web streams) would be ~14 MB of the idle daemon; the plugin speaks node:http.
    expect(loaded.builtins).not.toContain(UNDICI);
    // Its options' JSON Schema is interpreted (connectors/plugins/json-schema.ts): ajv is not loaded to compile it.
    const ajv = loaded.files.filter((f) => f.includes("/dist/app/") && readFileSync(f, "utf8").includes("ajv/dist/runtime/ucs2length"));
    expect(ajv).toEqual([]);
  });

  it("runs a bundle whose text V8 can keep at one byte a character", () => {
    // V8 keeps the source of every chunk it loaded; one character beyond Latin-1 (an em dash in a doc
    // comment) makes it two bytes a character, twice the memory. The bundle escapes them and drops JSDoc.
    const app = resolve(import.meta.dirname, "../../dist/app");
    const files = readdirSync(app, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js"));
    expect(files.length).toBeGreaterThan(10);
    const wide = files.filter((f) => [...readFileSync(join(app, f), "utf8")].some((c) => (c.codePointAt(0) ?? 0) > 0xff));
    expect(wide).toEqual([]);
  });
});
