import { spawn } from "node:child_process";
import { chmodSync, existsSync, readdirSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { baseSettings, CLI, createTempDir, runCli, writeConfig } from "../helpers/hermes.js";

/**
 * A daemon's socket that speaks protocol v1 and answers every `ask` with `done` carrying `reply`, after the
 * line `before` when one is given (something that is not a reply).
 */
async function fakeDaemon(socketPath: string, reply: string, before = ""): Promise<Server> {
  const server = createServer((socket: Socket) => {
    let buffer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const request = JSON.parse(buffer.slice(0, nl)) as { id: string };
        buffer = buffer.slice(nl + 1);
        socket.write(before);
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

  it("ask --json with no daemon ends its output with an error line (the last line is done or error), and still exits 3", async () => {
    const dir = tempDir();
    const asked = await runCli(["ask", "hi", "--json", "--config", join(dir, "none.yaml")], { env: { HOME: dir }, cwd: dir });
    expect(asked.code).toBe(3);
    expect(asked.stderr).toMatch(/^hermes is not running/);
    const last = JSON.parse(asked.stdout.trim().split("\n").at(-1) ?? "{}");
    expect(last).toMatchObject({ type: "error", code: "unreachable", message: expect.stringMatching(/^hermes is not running/) });
  });

  it("without a config, not running says that no config was found and that the socket is the default one", async () => {
    const dir = tempDir();
    const config = join(dir, "none.yaml");
    const status = await runCli(["status", "--config", config], { env: { HOME: dir }, cwd: dir });
    expect(status.code).toBe(3);
    expect(status.stderr).toBe(
      `hermes is not running (cannot connect to ${join(dir, "data/hermes.sock")}: ENOENT).\n` +
        "Start it with `hermes start` (foreground) or `systemctl start hermes`.\n" +
        `No config file was found (none at ${config}), so that is the default socket, in the current folder: pass --config PATH, or write a config with \`hermes setup\`.\n`,
    );
    // With a config, the socket is the config's and nothing more is said.
    const written = writeConfig(dir, baseSettings("http://127.0.0.1:9"));
    const configured = await runCli(["status", "--config", written], { env: { HOME: dir }, cwd: dir });
    expect(configured.code).toBe(3);
    expect(configured.stderr).not.toMatch(/No config file/);
  });

  it('a socket this user may not open is not "not running": it says so and exits 1; `restore` does not take it as stopped', async () => {
    const dir = tempDir();
    const socketPath = join(dir, "hermes.sock");
    const daemon = await fakeDaemon(socketPath, "ok");
    cleanups.push(() => new Promise<void>((resolve) => daemon.close(() => resolve())));
    // As root, the command runs as nobody (root opens any socket) and sees the service's 0600 socket;
    // otherwise the socket is made unopenable.
    const other = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    chmodSync(dir, 0o755);
    chmodSync(socketPath, "uid" in other ? 0o600 : 0);
    const env = { HOME: "/nonexistent", HERMES_SOCKET: socketPath, XDG_CACHE_HOME: "/nonexistent" };
    const config = "/nonexistent/hermes.yaml";
    const status = await runCli(["status", "--config", config], { env, ...other });
    expect(status.code).toBe(1);
    expect(status.stderr).toBe(
      `hermes: the hermes socket ${socketPath} exists, but this user may not open it (EACCES).\n` +
        "Run the command as the service's user (`sudo -u hermes hermes …`) or with sudo.\n",
    );
    const restore = await runCli(["restore", "/nonexistent/backup.db", "--config", config], { env, ...other });
    expect(restore.code).toBe(1);
    expect(restore.stderr).toMatch(/this user may not open it \(EACCES\)/);
    // `hermes doctor` does not call it a stale socket either.
    const readable = writeConfig(dir, { ...baseSettings("http://127.0.0.1:9"), connectors: { cli: { socket: socketPath } } });
    const doctor = await runCli(["doctor", "--config", readable], { env: { HERMES_SYSTEMD_DIR: join(dir, "units") }, ...other });
    expect(doctor.stdout).toMatch(
      /^! socket\s+\S+ exists, but this user may not open it \(EACCES\)\n\s+fix: run `hermes doctor` as the service's user/m,
    );
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

  // A line that is JSON but not a reply object (`null`) made `hermes ask` crash with a TypeError trace.
  it.each(["garbage\n", "null\n", "[]\n", "7\n"])(
    "hermes ask skips a socket line %j that is no reply, and prints the reply",
    async (line) => {
      const dir = tempDir();
      const socketPath = join(dir, "hermes.sock");
      const daemon = await fakeDaemon(socketPath, "ok", line);
      cleanups.push(() => new Promise<void>((resolve) => daemon.close(() => resolve())));
      const asked = await runCli(["ask", "hello", "--config", join(dir, "none.yaml")], { env: { HOME: dir, HERMES_SOCKET: socketPath } });
      expect(asked).toMatchObject({ code: 0, stdout: "ok\n", stderr: "" });
    },
  );
});
