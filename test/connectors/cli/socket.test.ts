import { createConnection, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "../../fakes/model-server.js";
import { baseSettings, type Hermes, startHermes } from "../../helpers/hermes.js";

/** A raw NDJSON connection to the daemon's socket. */
async function connect(path: string) {
  const socket: Socket = createConnection(path);
  await new Promise((r) => socket.once("connect", r));
  socket.setEncoding("utf8");
  const lines: Record<string, any>[] = [];
  const waiters: (() => void)[] = [];
  let buffer = "";
  socket.on("data", (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      lines.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
    }
    for (const w of waiters.splice(0)) w();
  });
  const next = async (): Promise<Record<string, any>> => {
    while (lines.length === 0) await new Promise<void>((r) => waiters.push(r));
    return lines.shift() as Record<string, any>;
  };
  return { socket, next, send: (text: string) => socket.write(text) };
}

describe("the CLI socket", () => {
  let model: FakeModel;
  let hermes: Hermes;
  beforeAll(async () => {
    model = await startFakeModel();
    hermes = await startHermes(baseSettings(model.url));
  });
  afterAll(async () => {
    await hermes.stop();
    await model.close();
  });

  it("is a socket only its owner can use", async () => {
    const { statSync } = await import("node:fs");
    expect(statSync(hermes.socketPath).mode & 0o777).toBe(0o600);
  });

  it("answers garbage, invalid JSON and a wrong version with errors and keeps the connection", async () => {
    const c = await connect(hermes.socketPath);
    c.send("garbage\n");
    expect((await c.next()).error.code).toBe("bad_json");
    c.send('{"v":1,"id":"x",\n');
    expect((await c.next()).error.code).toBe("bad_json");
    c.send("[1,2,3]\n");
    expect((await c.next()).error.code).toBe("bad_json");
    c.send('{"v":2,"id":"y","op":"hello"}\n');
    expect((await c.next()).error.code).toBe("unsupported_version");
    c.send('{"v":1,"id":"z","op":"launch"}\n');
    expect((await c.next()).error.message).toContain("unknown op");
    c.send('{"v":1,"id":"h","op":"hello"}\n');
    const hello = await c.next();
    expect(hello).toMatchObject({ id: "h", type: "hello", protocol: 1 });
    c.socket.end();
  });

  it("reads a limit that is no whole number as the default, for audit and sessions", async () => {
    const c = await connect(hermes.socketPath);
    for (const op of ["audit", "sessions"]) {
      for (const limit of [0.5, -3, "7"]) {
        c.send(`${JSON.stringify({ v: 1, id: `${op}-${limit}`, op, limit })}\n`);
        expect(await c.next()).toMatchObject({ id: `${op}-${limit}`, type: "result", ok: true });
      }
    }
    c.socket.end();
  });

  it("answers a 2 MiB line with an error and stays usable", async () => {
    const c = await connect(hermes.socketPath);
    c.send(`{"v":1,"id":"big","op":"ask","session":"s","text":"${"a".repeat(2 * 1024 * 1024)}"}\n`);
    const reply = await c.next();
    expect(reply.error.code).toBe("too_long");
    c.send('{"v":1,"id":"h2","op":"hello"}\n');
    expect((await c.next()).type).toBe("hello");
    c.socket.end();
    expect(model.requests).toHaveLength(0);
  });

  it("survives a client that disconnects in the middle of a run", async () => {
    model.script({ text: "late reply", delayMs: 200 });
    const c = await connect(hermes.socketPath);
    c.send('{"v":1,"id":"a","op":"ask","session":"gone","text":"hello"}\n');
    await model.waitForRequests(1);
    c.socket.destroy();
    const result = await hermes.ask("still there?");
    expect(result.code).toBe(0);
  });
});
