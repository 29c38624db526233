/**
 * `hermes ask` coloured its progress lines (stderr) when stdout was a terminal, and not when stderr was:
 * `hermes ask … 2>run.log` on a terminal filled the log with escape codes. Colour follows the stream written to.
 * And `--json` printed no last line when the daemon went away mid-run, though its last line is `done` or `error`.
 */
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { Client } from "../../src/cli/client.js";
import { runMessage } from "../../src/cli/run-view.js";
import { useTempDir } from "../helpers/fixture.js";

/** A daemon that answers any `ask` with one tool call and its result, then `done` (or, `dropping`, goes away after the call). */
async function fakeDaemon(dropping = false): Promise<string> {
  const path = join(useTempDir(), "hermes.sock");
  const server = createServer((socket) => {
    socket.setEncoding("utf8");
    socket.on("data", (line: string) => {
      const { id } = JSON.parse(line) as { id: string };
      const event = (e: object) => `${JSON.stringify({ v: 1, id, type: "event", event: e })}\n`;
      socket.write(event({ type: "tool_call", tool: "clock", args: {} }));
      if (dropping) return void socket.destroy();
      socket.write(event({ type: "tool_result", tool: "clock", ok: true, durationMs: 3 }));
      socket.write(`${JSON.stringify({ v: 1, id, type: "done", run_id: "r", reply: "noon", stop_reason: "done" })}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return path;
}

function stream(isTTY: boolean) {
  const chunks: string[] = [];
  const s = { isTTY, write: (c: string) => chunks.push(c) > 0 } as unknown as NodeJS.WriteStream;
  return { s, text: () => chunks.join("") };
}

describe("hermes ask's progress lines", () => {
  it("are coloured only when stderr, where they go, is a terminal", async () => {
    const client = await Client.connect(await fakeDaemon());
    onTestFinished(() => client.close());
    for (const [outTTY, errTTY] of [
      [true, false],
      [false, true],
    ] as const) {
      const out = stream(outTTY);
      // A terminal on stderr gets the spinner's frames too: only the ✓ line's colour is looked at.
      const err = stream(errTTY);
      await runMessage(client, "s", "time?", { json: false, stream: false, confirm: async () => false, out: out.s, err: err.s });
      expect(out.text()).toBe("noon\n");
      expect(err.text().includes("\u001b[32m✓")).toBe(errTTY);
    }
  });
});

describe("hermes ask --json", () => {
  it("ends with an error line when the daemon goes away mid-run, as its last line must be done or error", async () => {
    const client = await Client.connect(await fakeDaemon(true));
    onTestFinished(() => client.close());
    const out = stream(false);
    const err = stream(false);
    const run = runMessage(client, "s", "time?", { json: true, stream: false, confirm: async () => false, out: out.s, err: err.s });
    await expect(run).rejects.toThrow(/the daemon closed the connection/);
    const lines = out
      .text()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; code?: string });
    expect(lines.map((l) => l.type)).toEqual(["tool_call", "error"]);
    expect(lines.at(-1)).toMatchObject({ code: "connection_lost", message: "the daemon closed the connection" });
  });
});
