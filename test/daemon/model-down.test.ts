import { once } from "node:events";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel } from "../helpers/fixture.js";
import { baseSettings, type Hermes } from "../helpers/hermes.js";

/** A loopback port that nothing listens on (connections are refused at once). */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  return port;
}

/** The default retry schedule (4 retries from 500 ms) unless a test says otherwise. */
function settings(url: string, model: Record<string, unknown> = {}) {
  const base = baseSettings(url);
  return { ...base, model: { ...(base.model as object), retries: 4, retry_base_ms: 500, ...model } };
}

async function timedAsk(hermes: Hermes, text: string) {
  const started = performance.now();
  const result = await hermes.ask(text);
  return { ...result, ms: performance.now() - started };
}

const notReady = (l: Record<string, unknown>) => String(l.msg).startsWith("model endpoint not ready");

describe("a model endpoint that is down", () => {
  let hermes: Hermes | undefined;
  let model: FakeModel | undefined;

  it("is reported within about a second when the health probe already saw it down, and the next message after it is back is answered", async () => {
    const port = await closedPort();
    hermes = await useHermes(settings(`http://127.0.0.1:${port}`));
    await hermes.waitForLog(notReady);
    const down = await timedAsk(hermes, "hi");
    expect(down.stdout).toMatch(/The model is unreachable: .*ECONNREFUSED/);
    expect(down.ms).toBeLessThan(1500);
    model = await useModel({ port });
    model.script({ text: "I am back." });
    const back = await timedAsk(hermes, "hi again");
    expect(back.stdout).toBe("I am back.\n");
    expect(model.requests).toHaveLength(1);
  });

  it("budgets to the model's real context window once a model that was down at start is up", async () => {
    const port = await closedPort();
    hermes = await useHermes(settings(`http://127.0.0.1:${port}`, { context_tokens: 16384 }));
    await hermes.waitForLog(notReady);
    model = await useModel({ port });
    model.contextLength = 8192;
    await hermes.waitForLog((l) => l.server === 8192 && String(l.msg).startsWith("context_tokens is 16384"));
    const status = JSON.parse((await hermes.cli(["status", "--json"])).stdout);
    expect(status.serving.context_tokens).toBe(8192);
  });

  it("is retried in full when it was healthy (a restart may be under way), then reported at once while it stays down", async () => {
    model = await useModel();
    hermes = await useHermes(settings(model.url, { retry_base_ms: 300 }));
    await hermes.waitForLog((l) => l.msg === "model endpoint ready");
    await model.close();
    model = undefined;
    const first = await timedAsk(hermes, "hi");
    expect(first.stdout).toMatch(/The model is unreachable/);
    // Four waits of at least half of 300, 600, 1200 and 2400 ms.
    expect(first.ms).toBeGreaterThan(2250);
    await hermes.waitForLog(notReady);
    const second = await timedAsk(hermes, "hi");
    expect(second.stdout).toMatch(/The model is unreachable/);
    expect(second.ms).toBeLessThan(1500);
  });
});
