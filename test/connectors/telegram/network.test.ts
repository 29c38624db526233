import { HttpError } from "grammy";
import { describe, expect, it } from "vitest";
import { retryWhileUnreachable } from "../../../connectors/telegram/network.js";

const unreachable = () => new HttpError("Network request for 'sendMessage' failed!", new Error("connect ECONNREFUSED"));
const ok = { ok: true as const, result: true };

/** An API call that fails `failures` times as if the network were down, then goes through. */
function flakyCall(failures: number, error: () => Error = unreachable) {
  const calls: string[] = [];
  const prev = async (method: string) => {
    calls.push(method);
    if (calls.length <= failures) throw error();
    return ok;
  };
  return { calls, prev: prev as never };
}

describe("Telegram calls while the network is down", () => {
  it("are made again with pauses that double up to the cap, until they go through", async () => {
    const pauses: number[] = [];
    const retry = retryWhileUnreachable(new AbortController().signal, (_method, _err, ms) => pauses.push(ms), { firstMs: 1, maxMs: 8 });
    const { calls, prev } = flakyCall(6);
    expect(await retry(prev, "sendMessage", { chat_id: 1, text: "hi" } as never)).toEqual(ok);
    expect(calls).toHaveLength(7);
    expect(pauses).toEqual([1, 2, 4, 8, 8, 8]);
  });

  it("pass on any other failure at once", async () => {
    const retry = retryWhileUnreachable(new AbortController().signal, () => {}, { firstMs: 1, maxMs: 8 });
    const { calls, prev } = flakyCall(1, () => new Error("Bad Request: chat not found"));
    await expect(retry(prev, "sendMessage", {} as never)).rejects.toThrow("chat not found");
    expect(calls).toHaveLength(1);
  });

  it("stop waiting when the connector stops", async () => {
    const life = new AbortController();
    const retry = retryWhileUnreachable(life.signal, () => life.abort(), { firstMs: 60_000, maxMs: 60_000 });
    const { calls, prev } = flakyCall(Number.POSITIVE_INFINITY);
    await expect(retry(prev, "sendMessage", {} as never)).rejects.toBeInstanceOf(HttpError);
    expect(calls).toHaveLength(1);
  });
});
