/**
 * The graceful stop closes the CLI socket; a client that does not close its side (a `hermes chat` suspended
 * with Ctrl-Z, a script that keeps its connection) held the stop until systemd's TimeoutStopSec killed the
 * daemon (the database not closed, the pid file left), and a foreground `hermes start` never ended.
 */
import { spawn } from "node:child_process";
import { createConnection } from "node:net";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel, waitFor } from "../helpers/fixture.js";
import { baseSettings, CLI } from "../helpers/hermes.js";

const exitWithin = (exit: Promise<number | null>, ms: number) =>
  Promise.race([exit, new Promise<"running">((r) => setTimeout(() => r("running"), ms))]);

describe("the graceful stop with CLI clients connected", () => {
  let model: FakeModel;
  beforeEach(async () => {
    model = await useModel();
  });

  it("exits on SIGTERM while a `hermes chat` is suspended (Ctrl-Z) in some shell", async () => {
    const hermes = await useHermes(baseSettings(model.url));
    const chat = spawn(process.execPath, [CLI, "chat"], {
      cwd: hermes.dir,
      env: { ...process.env, HERMES_CONFIG: hermes.configPath },
      stdio: ["pipe", "pipe", "ignore"],
    });
    let out = "";
    chat.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
    });
    try {
      await waitFor(() => out.includes("hermes chat"), { message: "hermes chat connected" });
      chat.kill("SIGSTOP");
      expect(await exitWithin(hermes.stop(), 8000)).toBe(0);
    } finally {
      chat.kill("SIGKILL");
    }
  }, 25_000);

  it("exits on SIGTERM while a raw client keeps its side of the connection open", async () => {
    const hermes = await useHermes(baseSettings(model.url));
    const socket = createConnection({ path: hermes.socketPath, allowHalfOpen: true });
    await new Promise((r) => socket.once("connect", r));
    socket.resume();
    try {
      expect(await exitWithin(hermes.stop(), 8000)).toBe(0);
    } finally {
      socket.destroy();
    }
  }, 25_000);
});
