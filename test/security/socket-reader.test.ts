/** A CLI client that sends requests but never reads the replies is cut off instead of filling the daemon. */
import { createConnection } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { baseSettings, type Hermes, startHermes } from "../helpers/hermes.js";

describe("a socket client that never reads", () => {
  let model: FakeModel;
  let hermes: Hermes | undefined;
  beforeEach(async () => {
    model = await startFakeModel();
    hermes = await startHermes(baseSettings(model.url));
  });
  afterEach(async () => {
    await hermes?.stop();
    hermes = undefined;
    await model.close();
  });

  it("is disconnected once its unread replies pass the buffer limit, and the daemon serves others", async () => {
    const h = hermes as Hermes;
    const socket = createConnection(h.socketPath);
    socket.pause();
    const closed = new Promise((resolve) => socket.on("close", resolve));
    socket.on("error", () => {});
    const request = `${JSON.stringify({ v: 1, id: "x", op: "status" })}\n`;
    socket.write(request.repeat(40_000));
    const line = await h.waitForLog((l) => l.msg === "cli client does not read its replies; disconnected");
    expect(Number(line.unread)).toBeGreaterThan(8 * 1024 * 1024);
    socket.resume();
    await closed;
    const status = await h.cli(["status"]);
    expect(status.code).toBe(0);
  });
});
