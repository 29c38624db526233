/**
 * ModelClient.probe(signal?) without a signal: each client gives up after its own 5 s. The chain's probe
 * (3f264b3) always hands its endpoints a signal of its own, which only aborts once every probe it waits for has
 * answered: a primary that hangs then holds the chain's probe for ever.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/schema.js";
import { createModelClient } from "../../src/model/create.js";
import { createModelChain } from "../../src/model/failover.js";
import { startFakeModel } from "../fakes/model-server.js";

const endpoint = (extra: Record<string, unknown>) => configSchema.parse({ model: { retries: 1, retry_base_ms: 1, ...extra } }).model;
const silent = pino({ level: "silent" });

describe("the chain's probe without a signal", () => {
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it("gives up on a primary that hangs after the clients' own deadline, as one client does", async () => {
    const hung = createServer(() => undefined); // takes the request, never answers
    hung.listen(0, "127.0.0.1");
    await once(hung, "listening");
    closers.push(() => hung.closeAllConnections());
    closers.push(() => hung.close());
    const fallback = await startFakeModel();
    closers.push(() => fallback.close());
    fallback.models = ["small-model"];
    const base = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
    const chain = createModelChain(
      [
        { client: await createModelClient(endpoint({ provider: "ollama", base_url: base })), dailyTokens: 0 },
        {
          client: await createModelClient(endpoint({ provider: "openai", base_url: fallback.openaiUrl, name: "small-model" })),
          dailyTokens: 0,
        },
      ],
      { retryPrimaryAfterMs: 60_000, usedToday: () => 0, log: silent },
    );
    closers.push(() => chain.stop());
    const probe = await chain.probe(); // each client alone answers within 5 s
    expect(probe).toMatchObject({ reachable: true, detail: expect.stringMatching(/a fallback/) });
  }, 12_000);
});
