/**
 * Compaction against the window the serving endpoint really has: its requests were sized for
 * model.context_tokens, so with a server whose window is smaller (llama.cpp's n_ctx, a fallback's) they did
 * not fit, failed, and summaries stopped. And /compact sent while the compaction after a reply was still being
 * written said the summary could not be made. Through the real runner over a scripted model.
 */
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { COMPACTION_MARKER } from "../../src/agent/compaction.js";
import { TokenCalibration } from "../../src/agent/context.js";
import { Limiter } from "../../src/agent/limiter.js";
import { Runner } from "../../src/agent/runner.js";
import { Approvals } from "../../src/gate/approvals.js";
import { Gate } from "../../src/gate/gate.js";
import { createLogger } from "../../src/log.js";
import { promptTokens } from "../../src/model/tokens.js";
import type { ModelRequest, PromptWindow } from "../../src/model/types.js";
import { toolSpec } from "../../src/tools/define.js";
import { loadTools } from "../../src/tools/registry.js";
import type { AnyTool } from "../../src/tools/types.js";
import { makeConfig, makeStore, scriptedModel } from "../helpers/factories.js";
import { useTempDir } from "../helpers/fixture.js";

/** The runner over a scripted model whose endpoint reports `window` (as a server's real window, or a fallback's). */
async function agentWith(
  settings: Record<string, unknown>,
  o: { window?: PromptWindow; tools?: AnyTool[]; hold?: (req: ModelRequest) => Promise<void> } = {},
) {
  const dir = useTempDir();
  const store = makeStore(dir);
  const config = makeConfig({ agent: { confirm: [] }, tools: { enabled: [], files: { root: join(dir, "files") } }, ...settings });
  const loaded = await loadTools(config.tools.enabled, { config, store, now: () => new Date() }, o.tools ?? []);
  const approvals = new Approvals({ store, config: () => config });
  onTestFinished(() => approvals.disarmAll());
  const gate = new Gate({ store, approvals, tools: () => loaded.tools, config: () => config });
  const model = scriptedModel();
  const hold = o.hold;
  const client = {
    ...model.client,
    ...(o.window && { window: o.window }),
    ...(hold && {
      prepare: (req: ModelRequest) => {
        const send = model.client.prepare(req);
        return async (opts?: Parameters<typeof send>[0]) => {
          await hold(req);
          return send(opts);
        };
      },
    }),
  };
  const runner = new Runner({
    store,
    gate,
    approvals,
    limiter: new Limiter(config.model.concurrency),
    config: () => config,
    log: createLogger("silent"),
    model: () => client,
    toolSpecs: () => [...loaded.tools.values()].map(toolSpec),
    calibration: new TokenCalibration(),
    timeNote: () => "Current time: now",
    prompt: () => ({ system: "You are a test." }),
    fallbackListener: () => undefined,
  });
  runner.recover();
  runner.connectorsReady();
  onTestFinished(() => runner.shutdown(0));
  const ask = async (text: string, session = "cli:test") => {
    const { done } = runner.submit({ sessionKey: session, text, source: "cli", listener: () => {} });
    return done;
  };
  return { store, config, model, runner, ask };
}

const isCompaction = (r: ModelRequest) => r.messages.some((m) => m.content.includes(COMPACTION_MARKER));

describe("compaction and the serving endpoint's window", () => {
  it("sizes compaction requests to the window the endpoint really has, not to model.context_tokens", async () => {
    // model.context_tokens is the default 16384, but the server reports 4096 (llama.cpp's n_ctx, read at start; or a fallback's).
    const window = { model: "scripted", contextTokens: 4096, outputTokens: 1024 };
    const a = await agentWith({ context: { compact_every: 10 } }, { window });
    let failFirst = true;
    a.model.respond((req) => {
      if (!isCompaction(req)) return { text: `answer ${"a".repeat(300)}` };
      // The first compaction fails (the model calls a tool instead); turns are dropped meanwhile.
      if (failFirst) {
        failFirst = false;
        return { toolCalls: [{ name: "clock" }] };
      }
      return { text: "the summary" };
    });
    for (let i = 0; i < 30; i++) expect((await a.ask(`turn ${i} ${"w".repeat(1200)}`)).stopReason).toBe("done");
    await a.ask("last");
    const compactions = a.model.requests.filter(isCompaction);
    expect(compactions.length).toBeGreaterThan(1);
    // Every request, chat or compaction, fits the 4096-token window the server has.
    for (const r of a.model.requests) expect(promptTokens(r.messages, r.tools)).toBeLessThanOrEqual(4096);
  });
});

describe("/compact while the idle compaction after a reply is still running", () => {
  it("does not tell the user the summary could not be made", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding = false;
    const a = await agentWith(
      { model: { provider: "ollama", base_url: "http://127.0.0.1:9", name: "scripted", context_tokens: 4096 } },
      {
        hold: async (req) => {
          if (!isCompaction(req)) return;
          holding = true;
          await released;
        },
      },
    );
    a.model.respond((req) => ({ text: isCompaction(req) ? "the summary" : `answer ${"a".repeat(300)}` }));
    for (let i = 0; i < 10 && !holding; i++) await a.ask(`turn ${i} ${"w".repeat(1200)}`);
    // The reply went out and its compaction is being written (a minute or two on a CPU box); the owner sends /compact.
    expect(holding).toBe(true);
    const forced = a.runner.compact("cli:test");
    release();
    const result = await forced;
    expect(result.message).not.toMatch(/could not be made/);
  });
});
