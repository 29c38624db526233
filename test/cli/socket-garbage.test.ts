/**
 * A line from the socket that is JSON but not a reply object (`null`) made `hermes ask` crash with a
 * TypeError trace (Client.receive read `reply.id` of null) instead of skipping it like any unparsable line.
 */
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTempDir, runCli } from "../helpers/hermes.js";

async function daemonSaying(socketPath: string, before: string): Promise<Server> {
  const server = createServer((socket: Socket) => {
    let buffer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const request = JSON.parse(buffer.slice(0, nl)) as { id: string };
        buffer = buffer.slice(nl + 1);
        socket.write(before);
        socket.write(`${JSON.stringify({ v: 1, id: request.id, type: "done", run_id: "run_1", reply: "ok", stop_reason: "done" })}\n`);
      }
    });
    socket.on("end", () => socket.end());
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return server;
}

describe("hermes ask and lines from the socket that are not replies", () => {
  const cleanups: (() => void | Promise<void>)[] = [];
  afterEach(async () => {
    for (const f of cleanups.splice(0).reverse()) await f();
  });

  it.each(["garbage\n", "null\n", "[]\n", "7\n"])("skips %j and prints the reply", async (line) => {
    const dir = createTempDir();
    cleanups.push(dir.cleanup);
    const socketPath = join(dir.path, "hermes.sock");
    const daemon = await daemonSaying(socketPath, line);
    cleanups.push(() => new Promise<void>((resolve) => daemon.close(() => resolve())));
    const env = { HOME: dir.path, HERMES_SOCKET: socketPath };
    const asked = await runCli(["ask", "hello", "--config", join(dir.path, "none.yaml")], { env });
    expect(asked).toMatchObject({ code: 0, stdout: "ok\n", stderr: "" });
  });
});
