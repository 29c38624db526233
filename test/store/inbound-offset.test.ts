/**
 * After a week without updates Telegram numbers the next update at random, maybe lower than the last. The
 * offset only ever went up: the new update was served again at once, in a loop, never confirmed, and once
 * 100 of them had gathered no new message fitted in a batch; the stored offset kept it so across restarts.
 */
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { openStore } from "../../src/store/store.js";
import { useTempDir } from "../helpers/fixture.js";

describe("the inbound journal's Telegram offset", () => {
  it("follows update ids that start again lower after a quiet week", () => {
    const store = openStore(join(useTempDir(), "hermes.db"));
    onTestFinished(() => store.close());
    store.inbound.recordBatch("telegram", [{ update_id: 727_334_707 }], () => "42");
    expect(store.inbound.offset("telegram")).toBe(727_334_708);
    expect(store.inbound.recordBatch("telegram", [{ update_id: 117_314_199 }], () => "42")).toHaveLength(1);
    expect(store.inbound.offset("telegram")).toBe(117_314_200);
    store.inbound.recordBatch("telegram", [{ update_id: 117_314_200 }, { update_id: 117_314_201 }], () => "42");
    expect(store.inbound.offset("telegram")).toBe(117_314_202);
  });
});
