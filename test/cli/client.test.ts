import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, createTempDir, runCli } from "../helpers/hermes.js";

/** A daemon's socket that speaks protocol v1 and answers every `ask` with `done` carrying `reply`. */
async function fakeDaemon(socketPath: string, reply: string): Promise<Server> {
  const server = createServer((socket: Socket) => {
    let buffer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const request = JSON.parse(buffer.slice(0, nl)) as { id: string };
        buffer = buffer.slice(nl + 1);
        socket.write(`${JSON.stringify({ v: 1, id: request.id, type: "done", run_id: "run_1", reply, stop_reason: "done" })}\n`);
      }
    });
    socket.on("end", () => socket.end());
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return server;
}

describe("the hermes command as a client", () => {
  const cleanups: (() => void | Promise<void>)[] = [];
  afterEach(async () => {
    for (const f of cleanups.splice(0).reverse()) await f();
  });
  const tempDir = () => {
    const dir = createTempDir();
    cleanups.push(dir.cleanup);
    return dir.path;
  };

  it("keeps no compile cache for a client command; `config check`, which loads the daemon's code, does", async () => {
    const dir = tempDir();
    const cache = join(dir, "cache");
    const socketPath = join(dir, "hermes.sock");
    const daemon = await fakeDaemon(socketPath, "ok");
    cleanups.push(() => new Promise<void>((resolve) => daemon.close(() => resolve())));
    const env = { HOME: dir, XDG_CACHE_HOME: cache, CACHE_DIRECTORY: "", HERMES_SOCKET: socketPath };
    const asked = await runCli(["ask", "hello", "--config", join(dir, "none.yaml")], { env });
    expect(asked).toMatchObject({ code: 0, stdout: "ok\n" });
    expect(existsSync(join(cache, "hermes"))).toBe(false);
    await runCli(["config", "check", "--config", join(dir, "none.yaml")], { env });
    expect(readdirSync(join(cache, "hermes", "compile-cache")).length).toBeGreaterThan(0);
  });

  it("ends quietly, exit 0, when the reader of its output goes away (`hermes ask … | head -c 0`)", async () => {
    const dir = tempDir();
    const socketPath = join(dir, "hermes.sock");
    const daemon = await fakeDaemon(socketPath, "a long answer\n".repeat(10_000));
    cleanups.push(() => new Promise<void>((resolve) => daemon.close(() => resolve())));
    for (const args of [["--help"], ["ask", "hello"]]) {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { ...process.env, HERMES_SOCKET: socketPath, HERMES_CONFIG: join(dir, "none.yaml") },
        stdio: ["ignore", "pipe", "pipe"],
      });
      // The reading end is closed before the command writes: its first write fails with EPIPE.
      child.stdout.destroy();
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (d: string) => {
        stderr += d;
      });
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      expect({ args, code, stderr }).toEqual({ args, code: 0, stderr: "" });
    }
  });
});
