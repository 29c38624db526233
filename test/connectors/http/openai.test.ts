import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../../fakes/model-server.js";
import type { FakeTelegram } from "../../fakes/telegram-server.js";
import { useHermes, useModel, useTelegram } from "../../helpers/fixture.js";
import { baseSettings, type Hermes, readDb, writeConfig } from "../../helpers/hermes.js";
import { approveFirstPending, baseUrlOf, bearer, HTTP_TOKEN, httpEnv, httpSettings } from "../../helpers/http.js";
import { waitFor } from "../../helpers/wait.js";
import { png } from "../../media/images.fixture.js";

const OWNER = 42;

describe("the OpenAI-compatible API", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  let hermes: Hermes | undefined;
  let base = "";
  const start = async (extra: Record<string, unknown> = {}) => {
    const settings = baseSettings(model.url);
    hermes = await useHermes(
      {
        ...settings,
        connectors: {
          cron: { enabled: false },
          telegram: telegram.settings([OWNER]),
          http: httpSettings([], { openai: { enabled: true, approvals_to: `telegram:${OWNER}` } }),
        },
        ...extra,
      },
      { env: httpEnv },
    );
    base = await baseUrlOf(hermes);
    return hermes;
  };
  const client = (apiKey = HTTP_TOKEN) => new OpenAI({ baseURL: `${base}/v1`, apiKey, maxRetries: 0 });
  const count = (sql: string, ...args: unknown[]) =>
    readDb((hermes as Hermes).dbPath, (db) => (db.prepare(sql).get(...args) as { n: number }).n);

  beforeEach(async () => {
    model = await useModel();
    telegram = await useTelegram();
  });

  it("lists its models, and refuses a wrong key, a missing one and a request without a user message in OpenAI's shape", async () => {
    await start();
    const models = await client().models.list();
    expect(models.data.map((m) => m.id)).toEqual(["hermes", "hermes-tools"]);
    expect(models.data[0]).toMatchObject({ id: "hermes", object: "model" });

    const wrong = await client("not-the-token")
      .chat.completions.create({ model: "hermes", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(wrong).toMatchObject({ status: 401, code: "invalid_api_key", type: "invalid_request_error" });
    const missing = await fetch(`${base}/v1/models`);
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { error: Record<string, unknown> }).error).toMatchObject({
      type: "invalid_request_error",
      code: "invalid_api_key",
      message: expect.stringContaining("Bearer"),
    });

    const noUser = await client()
      .chat.completions.create({ model: "hermes", messages: [{ role: "system", content: "be nice" }] })
      .catch((e: unknown) => e);
    expect(noUser).toBeInstanceOf(OpenAI.BadRequestError);
    expect((noUser as InstanceType<typeof OpenAI.BadRequestError>).message).toContain("no user message");

    // 30 wrong keys from one address in a minute: the next wrong one is refused as rate limited, while
    // the right key still gets in (failures never lock out the owner's token).
    for (let i = 0; i < 29; i++)
      await client("guess")
        .models.list()
        .catch(() => undefined);
    const limited = await client("guess")
      .models.list()
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((await client().models.list()).data.map((m) => m.id)).toContain("hermes");
    expect(limited).toMatchObject({ status: 429, type: "rate_limit_error", code: "rate_limit_exceeded" });
    expect(model.requests).toHaveLength(0);
  });

  it("answers a chat without a session from the request's messages alone, stores only the audit, and fills usage from the ledger", async () => {
    model.script(
      { toolCalls: [{ name: "clock", arguments: {} }], promptTokens: 120, outputTokens: 8 },
      { text: "It is noon.", promptTokens: 150, outputTokens: 5 },
    );
    await start();
    const answer = await client().chat.completions.create({
      model: "hermes",
      messages: [
        { role: "system", content: "Answer like a pirate." },
        { role: "user", content: "my name is Ada" },
        { role: "assistant", content: "Ahoy Ada." },
        { role: "user", content: "what time is it?" },
      ],
    });
    expect(answer.object).toBe("chat.completion");
    expect(answer.choices[0]?.message).toMatchObject({ role: "assistant", content: "It is noon." });
    expect(answer.choices[0]?.finish_reason).toBe("stop");
    expect(answer.usage).toEqual({ prompt_tokens: 270, completion_tokens: 13, total_tokens: 283 });
    const sent = model.requests[0]?.messages.map((m) => `${m.role}: ${m.content.split("\n")[0]}`) ?? [];
    expect(sent.slice(1)).toEqual([
      "user: [Instructions from the app I am used through]",
      "user: my name is Ada",
      "assistant: Ahoy Ada.",
      "user: what time is it?",
    ]);
    expect(model.requests[0]?.messages[1]?.content).toContain("Answer like a pirate.");
    expect(count("SELECT COUNT(*) AS n FROM messages")).toBe(0);
    expect(count("SELECT COUNT(*) AS n FROM summaries")).toBe(0);
    expect(count("SELECT COUNT(*) AS n FROM tool_calls WHERE tool = 'clock' AND status = 'ok'")).toBe(1);
    expect(count("SELECT COUNT(*) AS n FROM runs WHERE source = 'api' AND input = '' AND reply = '' AND status = 'done'")).toBe(1);

    // A second request knows nothing of the first.
    model.respond((req) => ({ text: `I see ${req.messages.length - 1} message(s).` }));
    const again = await client().chat.completions.create({ model: "hermes", messages: [{ role: "user", content: "who am I?" }] });
    expect(again.choices[0]?.message.content).toBe("I see 1 message(s).");
    // An empty user, as OpenAI takes it (some apps always send the field), is no session either.
    const empty = await client().chat.completions.create({ model: "hermes", user: "", messages: [{ role: "user", content: "and now?" }] });
    expect(empty.choices[0]?.message.content).toBe("I see 1 message(s).");
    expect(count("SELECT COUNT(*) AS n FROM messages")).toBe(0);
  });

  it("streams chat.completion.chunk events ending with [DONE], with tool lines for hermes-tools and usage when asked", async () => {
    model.script({ toolCalls: [{ name: "clock", arguments: {} }] }, { text: "Half past two.", promptTokens: 40, outputTokens: 4 });
    await start();
    const stream = await client().chat.completions.create({
      model: "hermes-tools",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "time?" }],
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.id === chunks[0]?.id)).toBe(true);
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("🔧 clock: done\n\nHalf past two.");
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
    });

    model.script({ text: "Plain." });
    const raw = await fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { ...bearer(), "content-type": "application/json" },
      body: JSON.stringify({ model: "hermes", stream: true, messages: [{ role: "user", content: "again" }] }),
    });
    expect(raw.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const lines = (await raw.text()).split("\n").filter((l) => l.startsWith("data: "));
    expect(lines.at(-1)).toBe("data: [DONE]");
    expect(
      lines
        .slice(0, -1)
        .map((l) => JSON.parse(l.slice(6)).choices[0]?.delta.content ?? "")
        .join(""),
    ).toBe("Plain.");
  });

  it("streams the words of each step apart, hides a call printed as fenced JSON, and ends with the notices the JSON answer has", async () => {
    await start();
    const both = async (content: string) => {
      const stream = await client().chat.completions.create({ model: "hermes", stream: true, messages: [{ role: "user", content }] });
      let streamed = "";
      for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? "";
      return streamed;
    };
    const call = '```json\n{"name": "clock", "arguments": {}}\n```';
    // Words before a native call, then a call printed as a fenced block (a small model's way), split into pieces.
    model.script(
      { text: "Let me check.", toolCalls: [{ name: "clock", arguments: {} }] },
      { text: `One more look.\n${call}`, textPieces: ["One more look.\n``", '`json\n{"name": "clo', 'ck", "arguments": {}}\n`', "``"] },
      { text: "It is noon." },
    );
    expect(await both("time?")).toBe("Let me check.\n\nOne more look.\n\nIt is noon.");
    expect(model.requests).toHaveLength(3); // the fenced call ran
    // A fenced block that is no call is shown, as the reply keeps it.
    model.script({ text: 'Like this:\n```json\n{"a": 1}\n```' });
    expect(await both("show json")).toBe('Like this:\n```json\n{"a": 1}\n```');
    // 21 calls in one step: only 20 run, and the stream says so at its end as the JSON answer does in front.
    const zones = Intl.supportedValuesOf("timeZone").slice(0, 21);
    const many = zones.map((timezone) => ({ name: "clock", arguments: { timezone } }));
    model.script({ toolCalls: many }, { text: "Done." });
    const streamed = await both("many");
    expect(streamed).toMatch(/^Done\.\n\n\(the model asked for 21 tool calls in one step; only the first 20 were run\)$/);
  });

  it("streams an answer whose model connection broke and was retried without repeating the words already sent", async () => {
    await start();
    const streamed = async () => {
      const stream = await client().chat.completions.create({ model: "hermes", stream: true, messages: [{ role: "user", content: "q" }] });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      return text;
    };
    // The last piece written before a break can be lost with it: the empty one takes that place.
    const broken = (text: string) => ({ text, textPieces: [text, ""], pieceGapMs: 20, drop: true });
    model.script(broken("The answer is"), { text: "The answer is 42." });
    expect(await streamed()).toBe("The answer is 42.");
    // A retry that words it differently: the stream stops where they part, and the reply follows in full.
    model.script(broken("The answer is forty"), { text: "The answer is 42." });
    expect(await streamed()).toBe("The answer is forty\n\nThe answer is 42.");
  });

  it("keeps a session per user on hermes' own history: a client that resends the conversation does not double it", async () => {
    model.respond((req) => ({ text: `turn ${req.messages.filter((m) => m.role === "user").length}` }));
    await start();
    const first = await client().chat.completions.create({ model: "hermes", user: "alice", messages: [{ role: "user", content: "one" }] });
    expect(first.choices[0]?.message.content).toBe("turn 1");
    const second = await client().chat.completions.create({
      model: "hermes",
      user: "alice",
      messages: [
        { role: "user", content: "one" },
        { role: "assistant", content: "turn 1" },
        { role: "user", content: "two" },
      ],
    });
    expect(second.choices[0]?.message.content).toBe("turn 2");
    const userTurns = model.requests[1]?.messages.filter((m) => m.role === "user").map((m) => m.content.split("\n")[0]);
    expect(userTurns).toEqual(["one", "two"]);
    expect(count("SELECT COUNT(*) AS n FROM messages m JOIN sessions s ON s.id = m.session_id WHERE s.key = 'api:alice'")).toBe(4);

    // The header names the session too; another user starts from nothing.
    const viaHeader = await client().chat.completions.create(
      { model: "hermes", messages: [{ role: "user", content: "three" }] },
      { headers: { "X-Hermes-Session": "alice" } },
    );
    expect(viaHeader.choices[0]?.message.content).toBe("turn 3");
    const bob = await client().chat.completions.create({ model: "hermes", user: "bob", messages: [{ role: "user", content: "hi" }] });
    expect(bob.choices[0]?.message.content).toBe("turn 1");
  });

  it("asks a gated call in the owner's Telegram while the SDK waits, and the answer says it was approved", async () => {
    model.script({ toolCalls: [{ name: "write_file", arguments: { path: "api.txt", content: "from the API" } }] }, { text: "Written." });
    const h = await start();
    const answer = client().chat.completions.create({ model: "hermes", stream: true, messages: [{ role: "user", content: "write it" }] });
    const request = await telegram.waitFor((c) => c.method === "sendMessage" && Boolean(c.params.reply_markup));
    expect(Number(request.params.chat_id)).toBe(OWNER);
    expect(request.params.text).toContain("write_file");
    const pending = (await (await fetch(`${base}/v1/approvals`, { headers: bearer() })).json()) as { approvals: { tool: string }[] };
    expect(pending.approvals.map((a) => a.tool)).toEqual(["write_file"]);
    expect(existsSync(join(h.dir, "data/files/api.txt"))).toBe(false);
    const [approve] = request.params.reply_markup.inline_keyboard[0];
    telegram.press(OWNER, OWNER, request.result.message_id, approve.callback_data);
    let text = "";
    for await (const chunk of await answer) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe(
      `⏸ write_file waits for approval (asked at telegram:${OWNER} and on the dashboard)\n✅ write_file was approved (by telegram:@user${OWNER})\n\nWritten.`,
    );
    expect(readFileSync(join(h.dir, "data/files/api.txt"), "utf8")).toBe("from the API");
    // The run's own reply is the client's, not sent to the owner's chat.
    expect(telegram.messagesTo(OWNER).some((c) => c.params.text === "Written.")).toBe(false);
  });

  it("a denied call is said so in the JSON answer, and the call does not run", async () => {
    model.script({ toolCalls: [{ name: "write_file", arguments: { path: "no.txt", content: "never" } }] });
    model.respond((req) => ({ text: `Model saw: ${req.messages.at(-1)?.content}` }));
    const h = await start();
    const answer = client().chat.completions.create({ model: "hermes", user: "carol", messages: [{ role: "user", content: "write it" }] });
    const request = await telegram.waitFor((c) => c.method === "sendMessage" && Boolean(c.params.reply_markup));
    const [, deny] = request.params.reply_markup.inline_keyboard[0];
    telegram.press(OWNER, OWNER, request.result.message_id, deny.callback_data);
    const content = (await answer).choices[0]?.message.content ?? "";
    expect(content).toMatch(
      new RegExp(
        `^⏸ write_file waits for approval .*\\n❌ write_file was denied \\(by telegram:@user${OWNER}\\); it did not run\\n\\nModel saw: `,
      ),
    );
    expect(content).toContain("denied");
    expect(existsSync(join(h.dir, "data/files/no.txt"))).toBe(false);
  });

  it("keeps a waiting stream alive with a comment, and a decision on the dashboard's API ends the wait", async () => {
    model.script({ toolCalls: [{ name: "write_file", arguments: { path: "w.txt", content: "x" } }] }, { text: "Done." });
    await start({ agent: { confirm_timeout_s: 60 } });
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { ...bearer(), "content-type": "application/json" },
      body: JSON.stringify({ model: "hermes", stream: true, messages: [{ role: "user", content: "write" }] }),
    });
    const reader = (res.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes(": waiting for approval of write_file\n\n")) seen += (await reader.read()).value ?? "";
    expect(await approveFirstPending(base)).toBe(200);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) seen += chunk.value;
    expect(seen).toContain("was approved (by http)");
    expect(seen.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  it("stops a run without a session when its client goes away before the answer", async () => {
    model.script({ text: "Too late.", gate: new Promise(() => {}) });
    await start();
    const gone = new AbortController();
    const asked = client()
      .chat.completions.create({ model: "hermes", messages: [{ role: "user", content: "slow one" }] }, { signal: gone.signal })
      .catch((e: unknown) => e);
    await model.waitForRequests(1);
    gone.abort();
    expect(await asked).toBeInstanceOf(OpenAI.APIUserAbortError);
    const ended = await (hermes as Hermes).waitForLog((l) => l.msg === "run ended");
    expect(ended.stopReason).toBe("aborted");
    expect(count("SELECT COUNT(*) AS n FROM runs WHERE source = 'api' AND status = 'aborted'")).toBe(1);
  });

  it("stops a session's run when its client goes away (an app's Stop), also one queued behind another, and the next request is answered", async () => {
    let release!: () => void;
    model.script({ text: "First.", gate: new Promise<void>((r) => (release = r)) });
    await start();
    const ask = (content: string, signal?: AbortSignal) =>
      client()
        .chat.completions.create({ model: "hermes", user: "webui", messages: [{ role: "user", content }] }, { signal })
        .catch((e: unknown) => e);
    const first = ask("first");
    await model.waitForRequests(1);
    // A second request waits behind the first in the session; its app gives up.
    const gone = new AbortController();
    const queued = ask("second", gone.signal);
    await waitFor(() => count("SELECT COUNT(*) AS n FROM runs WHERE status = 'queued'") === 1, { message: "the second run queued" });
    gone.abort();
    expect(await queued).toBeInstanceOf(OpenAI.APIUserAbortError);
    // The door learns of it when the connection closes, a moment after the app gave up: released before, the
    // first run's end could start the queued one before its stop came.
    await (hermes as Hermes).waitForLog((l) => l.msg === "the API client went away before the answer; its run is stopped");
    // Ended at once, still queued: its message is not added to the session, and its turn starts nothing.
    expect(count("SELECT COUNT(*) AS n FROM runs WHERE status = 'aborted'")).toBe(1);
    release();
    expect(((await first) as OpenAI.ChatCompletion).choices[0]?.message.content).toBe("First.");
    expect(model.requests).toHaveLength(1); // the one given up never reached the model
    expect(count("SELECT COUNT(*) AS n FROM messages WHERE role = 'user' AND content LIKE 'second%'")).toBe(0);

    // A run waiting for approval: Stop in the app denies it, and the session answers the next request at once.
    model.script({ toolCalls: [{ name: "write_file", arguments: { path: "x.txt", content: "x" } }] });
    const stopped = new AbortController();
    const waiting = ask("write it", stopped.signal);
    await telegram.waitFor((c) => c.method === "sendMessage" && Boolean(c.params.reply_markup));
    stopped.abort();
    expect(await waiting).toBeInstanceOf(OpenAI.APIUserAbortError);
    model.script({ text: "Next." });
    expect(((await ask("next")) as OpenAI.ChatCompletion).choices[0]?.message.content).toBe("Next.");
    expect(count("SELECT COUNT(*) AS n FROM approvals WHERE status = 'denied' AND decided_by = 'stop'")).toBe(1);
    expect(count("SELECT COUNT(*) AS n FROM runs WHERE status = 'aborted'")).toBe(2);
  });

  it("a run stopped while it waits for the model's one slot ends at once, not when the slot frees", async () => {
    let release!: () => void;
    model.script({ text: "Long.", gate: new Promise<void>((r) => (release = r)) });
    await start();
    const first = client().chat.completions.create({ model: "hermes", user: "a", messages: [{ role: "user", content: "long one" }] });
    await model.waitForRequests(1);
    const gone = new AbortController();
    const second = client()
      .chat.completions.create({ model: "hermes", messages: [{ role: "user", content: "waits for the slot" }] }, { signal: gone.signal })
      .catch((e: unknown) => e);
    await waitFor(() => count("SELECT COUNT(*) AS n FROM runs WHERE status = 'running'") === 2, { message: "both runs running" });
    gone.abort();
    expect(await second).toBeInstanceOf(OpenAI.APIUserAbortError);
    await waitFor(() => count("SELECT COUNT(*) AS n FROM runs WHERE status = 'aborted'") === 1, { message: "the waiting run ended" });
    expect(model.requests).toHaveLength(1);
    release();
    expect((await first).choices[0]?.message.content).toBe("Long.");
  });

  it("ends a run without a session after a restart: its context was in memory only, its approval expires", async () => {
    model.script({ toolCalls: [{ name: "write_file", arguments: { path: "late.txt", content: "x" } }] });
    const h = await start();
    void client()
      .chat.completions.create({ model: "hermes", messages: [{ role: "user", content: "write later" }] })
      .catch(() => undefined);
    await telegram.waitFor((c) => c.method === "sendMessage" && Boolean(c.params.reply_markup));
    await h.kill();
    hermes = await h.restart();
    await hermes.waitForLog((l) => l.msg === "http listening");
    const run = readDb(hermes.dbPath, (db) => db.prepare("SELECT status, input, reply FROM runs WHERE source = 'api'").get());
    expect(run).toEqual({ status: "interrupted", input: "", reply: "" });
    expect(count("SELECT COUNT(*) AS n FROM approvals WHERE status = 'expired' AND decided_by = 'restart'")).toBe(1);
    expect(count("SELECT COUNT(*) AS n FROM messages")).toBe(0);
    expect(model.requests).toHaveLength(1);
    expect(existsSync(join(h.dir, "data/files/late.txt"))).toBe(false);
  });

  it("takes an image_url data: URL through the media path to a vision model", async () => {
    model.capabilities["hermes3:8b"] = ["completion", "tools", "vision"];
    model.script({ text: "A tiny picture." });
    await start();
    const image = png(64, 48);
    const answer = await client().chat.completions.create({
      model: "hermes",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "what is this?" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${image.toString("base64")}` } },
          ],
        },
      ],
    });
    expect(answer.choices[0]?.message.content).toBe("A tiny picture.");
    const carried = model.requests[0]?.messages.at(-1);
    expect(carried?.content).toMatch(/^what is this\?\n\[photo: 64×48 PNG/);
    expect(carried?.images).toEqual([image.toString("base64")]);
    // A run without a session keeps no copy of its image either.
    const media = join((hermes as Hermes).dir, "data/media");
    expect(existsSync(media) ? readdirSync(media, { recursive: true }).filter((f) => String(f).endsWith(".png")) : []).toEqual([]);

    const web = await client()
      .chat.completions.create({
        model: "hermes",
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }],
      })
      .catch((e: unknown) => e);
    expect(web).toMatchObject({ status: 400, code: "invalid_image" });
    const broken = await client()
      .chat.completions.create({
        model: "hermes",
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png,%E0%A4%A" } }] }],
      })
      .catch((e: unknown) => e);
    expect(broken).toMatchObject({ status: 400, code: "invalid_image", message: expect.stringMatching(/%-encoding is broken/) });
    // A good image before a refused one: the request is refused whole, and the first is not kept.
    const dataUrl = `data:image/png;base64,${image.toString("base64")}`;
    for (const user of [undefined, "kitchen"]) {
      const mixed = await client()
        .chat.completions.create({
          model: "hermes",
          ...(user && { user }),
          messages: [
            {
              role: "user",
              content: [
                { type: "image_url", image_url: { url: dataUrl } },
                { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
              ],
            },
          ],
        })
        .catch((e: unknown) => e);
      expect(mixed).toMatchObject({ status: 400, code: "invalid_image" });
    }
    expect(existsSync(media) ? readdirSync(media, { recursive: true }).filter((f) => String(f).endsWith(".png")) : []).toEqual([]);
    expect(model.requests).toHaveLength(1);
  });

  it("sets no reminder nothing could deliver, and one at approvals_to when it is set", async () => {
    const remind = { name: "remind", arguments: { action: "create", text: "water the plants", in_minutes: 60 } };
    const toolResult = (i: number) => model.requests[i]?.messages.find((m) => m.role === "tool")?.content ?? "";
    model.script({ toolCalls: [remind] }, { text: "I could not." }, { toolCalls: [remind] }, { text: "Set." });
    const settings = baseSettings(model.url);
    hermes = await useHermes(
      {
        ...settings,
        connectors: {
          cron: { enabled: true },
          telegram: telegram.settings([OWNER]),
          http: httpSettings([], { openai: { enabled: true } }),
        },
      },
      { env: httpEnv },
    );
    base = await baseUrlOf(hermes);
    const ask = () =>
      client().chat.completions.create({ model: "hermes", user: "kitchen", messages: [{ role: "user", content: "remind me" }] });
    expect((await ask()).choices[0]?.message.content).toBe("I could not.");
    expect(toolResult(1)).toMatch(/could not be delivered: no connector can send a message to api:kitchen later.*approvals_to/);
    expect(count("SELECT COUNT(*) AS n FROM reminders")).toBe(0);

    // With approvals_to, the run's messages for later go to that chat: so does the reminder.
    writeConfig(hermes.dir, {
      ...settings,
      connectors: {
        cron: { enabled: true },
        telegram: telegram.settings([OWNER]),
        http: httpSettings([], { openai: { enabled: true, approvals_to: `telegram:${OWNER}` } }),
      },
    });
    const before = hermes.logs.length;
    hermes.process.kill("SIGHUP");
    await hermes.waitForLog((l) => l.msg === "config reloaded" && (hermes as Hermes).logs.indexOf(l) >= before);
    expect((await ask()).choices[0]?.message.content).toBe("Set.");
    expect(readDb(hermes.dbPath, (db) => db.prepare("SELECT channel, text FROM reminders").all())).toEqual([
      { channel: `telegram:${OWNER}`, text: "water the plants" },
    ]);
  });

  it("recalls from every session, as the owner's token does on /v1/ask", async () => {
    await start();
    model.script({ text: "Noted." });
    expect((await (hermes as Hermes).ask("the plumber is called Anna")).code).toBe(0);
    model.script({ toolCalls: [{ name: "recall", arguments: { query: "plumber" } }] }, { text: "Anna." });
    await client().chat.completions.create({
      model: "hermes",
      user: "webui",
      messages: [{ role: "user", content: "who is the plumber?" }],
    });
    expect(model.requests.at(-1)?.messages.find((m) => m.role === "tool")?.content).toMatch(
      /cli:default, the owner: "the \[plumber\] is called Anna"/,
    );
  });

  it("is off unless connectors.http.openai.enabled", async () => {
    hermes = await useHermes(
      { ...baseSettings(model.url), connectors: { cron: { enabled: false }, http: httpSettings() } },
      { env: httpEnv },
    );
    base = await baseUrlOf(hermes);
    const res = await fetch(`${base}/v1/models`, { headers: bearer() });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });
});
