import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join, resolve } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeMcpHttp } from "../fakes/mcp-http-server.js";
import type { FakeModel, RecordedRequest, Turn } from "../fakes/model-server.js";
import { useHermes, useMcpHttp, useModel, useTempDir } from "../helpers/fixture.js";
import { baseSettings, type Hermes, writeConfig } from "../helpers/hermes.js";
import { baseUrlOf, bearer, httpEnv, httpSettings } from "../helpers/http.js";
import { waitFor } from "../helpers/wait.js";

const STDIO_SERVER = resolve(import.meta.dirname, "../fakes/mcp-stdio-server.mjs");
const TOKEN = "ha-long-lived-token-for-tests";

const call = (name: string, args: Record<string, unknown> = {}): Turn => ({ toolCalls: [{ name, arguments: args }] });
/** The model repeats the tool results it got, so the reply shows what the gate and the server did. */
const echoResults = (req: RecordedRequest): Turn => ({
  text: `Results: ${req.messages
    .filter((m) => m.role === "tool")
    .map((m) => m.content)
    .join(" | ")}`,
});
const toolNames = (req: RecordedRequest | undefined) => (req?.tools ?? []).map((t) => t.function?.name ?? t.name);

describe("MCP tool servers", () => {
  let model: FakeModel;
  let http: FakeMcpHttp;
  let dir: string;
  let hermes: Hermes | undefined;
  const ledger = () => {
    const path = join(dir, "ledger.txt");
    return existsSync(path) ? readFileSync(path, "utf8").trim().split("\n") : [];
  };
  const downFile = () => join(dir, "down");
  const pids = () => readFileSync(join(dir, "pids.txt"), "utf8").trim().split("\n").map(Number);
  const stdioServer = (extra: Record<string, unknown> = {}): Record<string, unknown> & { env: Record<string, string> } => ({
    command: process.execPath,
    args: [STDIO_SERVER],
    env: { MCP_LEDGER: join(dir, "ledger.txt"), MCP_DOWN_FILE: downFile(), MCP_PID_FILE: join(dir, "pids.txt") },
    timeout_s: 5,
    ...extra,
  });
  /** Starts hermes and, unless `settle` is false, waits as `hermes tools` does for the servers' first attempts. */
  const start = async (
    settings: { enabled: string[]; servers: Record<string, unknown>; agent?: Record<string, unknown> },
    settle = true,
  ) => {
    hermes = await useHermes(
      {
        ...baseSettings(model.url),
        agent: { confirm_timeout_s: 600, confirm: [], ...settings.agent },
        tools: { enabled: settings.enabled },
        mcp: { servers: settings.servers },
      },
      { dir: dir, env: { HA_TOKEN: TOKEN } },
    );
    if (settle) await hermes.cli(["tools"]);
    return hermes;
  };
  const homeServer = (extra: Record<string, unknown> = {}) => ({
    url: http.url,
    headers: { Authorization: "Bearer ${HA_TOKEN}" },
    ...extra,
  });

  beforeEach(async () => {
    dir = useTempDir();
    model = await useModel();
    model.respond(echoResults);
    http = await useMcpHttp({ token: TOKEN, ledger: join(dir, "ledger.txt") });
  });

  it("lists the tools of a stdio and a Streamable HTTP server that the enable list names, exactly or by glob", async () => {
    const h = await start({
      enabled: ["clock", "home__*", "files__read_*", "files__lights_dim"],
      servers: { home: homeServer({ confirm: "always" }), files: stdioServer() },
    });
    const listed = JSON.parse((await h.cli(["tools", "--json"])).stdout) as {
      tools: { name: string; source: string; asks: string; why: string | null; prompt_tokens: number }[];
      servers: { name: string; connected: boolean; tools: number; enabled: number; transport: string }[];
    };
    const names = listed.tools.map((t) => t.name).sort();
    expect(names).toContain("clock");
    expect(names).toContain("home__set_light");
    expect(names).toContain("home__lights_dim");
    expect(names).toContain("files__read_state");
    expect(names).toContain("files__lights_dim");
    expect(names).not.toContain("files__set_light");
    expect(names).not.toContain("files__hang");
    const byName = new Map(listed.tools.map((t) => [t.name, t]));
    expect(byName.get("home__read_state")).toMatchObject({
      source: "mcp:home",
      asks: "always",
      why: expect.stringMatching(/its confirm is always/),
    });
    expect(byName.get("files__read_state")).toMatchObject({ source: "mcp:files", asks: "never", why: "annotated readOnlyHint" });
    expect(byName.get("files__lights_dim")).toMatchObject({ asks: "always", why: expect.stringMatching(/not mark this tool read-only/) });
    expect(byName.get("clock")).toMatchObject({ source: "built-in", asks: "never" });
    expect(byName.get("files__read_state")?.prompt_tokens).toBeGreaterThan(10);
    expect(listed.servers).toEqual([
      expect.objectContaining({ name: "home", connected: true, transport: "streamable-http", tools: 9, enabled: 9 }),
      expect.objectContaining({ name: "files", connected: true, transport: "stdio", tools: 11, enabled: 2 }),
    ]);
    expect(http.authorizations.every((a) => a === `Bearer ${TOKEN}`)).toBe(true);
    const text = (await h.cli(["tools"])).stdout;
    expect(text).toMatch(/files__read_state\s+mcp:files .* asks: never \(annotated readOnlyHint\)/);
    expect(text).toMatch(/server files: connected \(stdio\), 11 tools, 2 enabled/);
    const status = (await h.cli(["status"])).stdout;
    expect(status).toMatch(/mcp home .*connected \(streamable-http\), 9 tools/);

    await h.ask("what is the state?");
    const sent = model.requests[0];
    expect(toolNames(sent)).toEqual(expect.arrayContaining(["clock", "home__read_state", "files__read_state"]));
    expect(toolNames(sent)).not.toContain("files__set_light");
    const spec = sent?.tools.find((t) => t.function?.name === "files__read_state") as unknown as {
      function: { description: string; parameters: Record<string, unknown> };
    };
    expect(spec.function.description).toBe("Reads the state of one entity. Use it to look, not to change.");
    expect(JSON.stringify(spec.function.parameters)).not.toMatch(/\$schema|"title"/);
    expect(h.logs.some((l) => l.msg === "mcp server stderr" && l.stderr === "fake server: starting")).toBe(true);
  });

  it("checks arguments against the server's schema before the call, and runs a read-only tool without asking", async () => {
    model.script(
      call("files__lights_dim", { level: 300 }),
      call("files__read_state", { entity: "light.kitchen" }),
      call("files__snapshot"),
    );
    const h = await start({ enabled: ["files__*"], servers: { files: stdioServer({ confirm: "never" }) } });
    const reply = (await h.ask("dim and look")).stdout;
    expect(reply).toMatch(/invalid arguments for files__lights_dim:[\s\S]*level: must be <= 100/);
    expect(reply).toMatch(/light\.kitchen is on/);
    expect(reply).toMatch(/"state":"on"/);
    expect(reply).toMatch(
      /front door camera\n\[image \(image\/png, 3 KB\): not shown to the model\]\n\[resource: front\.png file:\/\/\/srv\/cam\/front\.png\]/,
    );
    expect(ledger()).toEqual(["read_state light.kitchen"]);
    const audit = (await h.cli(["audit", "--json"])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { tool: string; decision: string; reason: string | null; status: string });
    expect(audit.map((a) => `${a.tool} ${a.decision} ${a.status}`).sort()).toEqual([
      "files__lights_dim blocked skipped",
      "files__read_state auto ok",
      "files__snapshot auto ok",
    ]);
  });

  it("asks before a tool that is not read-only (confirm: auto), and a denied call never reaches the server", async () => {
    model.script(call("home__set_light", { room: "kitchen", on: false }));
    const h = await start({ enabled: ["home__set_light"], servers: { home: homeServer() } });
    const denied = await h.ask("lights off", "--no");
    expect(denied.stderr).toMatch(/hermes wants to run home__set_light[\s\S]*MCP server home does not mark this tool read-only/);
    expect(denied.stdout).toMatch(/the user denied this call/);
    model.script(call("home__set_light", { room: "kitchen", on: false }));
    const approved = await h.ask("lights off", "--yes");
    expect(approved.stdout).toMatch(/the kitchen light is now off/);
    expect(ledger()).toEqual(["set_light kitchen false"]);
  });

  it("turns a server's error result into an error for the model and cuts long results like any tool's", async () => {
    model.script(call("files__fail"));
    const h = await start({
      enabled: ["files__fail", "files__read_state", "files__huge"],
      servers: { files: stdioServer({ confirm: "never", max_result_chars: 200 }) },
    });
    expect((await h.ask("try")).stdout).toMatch(/Results: error: the device is offline/);
    model.script(call("files__read_state", { entity: `sensor.${"x".repeat(1000)}` }));
    const long = (await h.ask("long")).stdout;
    expect(long).toMatch(/\[… \d+ characters cut …\]/);
    expect(long.length).toBeLessThan(300);
    model.script(call("files__huge", { mb: 8 }));
    await h.ask("huge");
    const result =
      model.requests
        .at(-1)
        ?.messages.filter((m) => m.role === "tool")
        .at(-1)?.content ?? "";
    expect(result).toMatch(/\[… 83884\d\d characters cut …\]/);
    expect(result.length).toBeLessThanOrEqual(200);
    expect(h.process.exitCode).toBeNull();
  });

  it("warns at start when the tool signatures take more than a quarter of the context window", async () => {
    hermes = await useHermes(
      {
        ...baseSettings(model.url),
        model: { ...(baseSettings(model.url).model as object), context_tokens: 1024, max_output_tokens: 256 },
        tools: { enabled: ["files__*"] },
        mcp: { servers: { files: stdioServer() } },
      },
      { dir },
    );
    const warning = await hermes.waitForLog((l) => typeof l.msg === "string" && l.msg.startsWith("tool signatures take"));
    expect(warning).toMatchObject({ contextTokens: 1024, byServer: { files: expect.any(Number) } });
    expect(warning.toolTokens as number).toBeGreaterThan(256);
  });

  it("times a hanging call out and tells the server it is cancelled; /stop cancels one too", async () => {
    model.script(call("files__hang"));
    const h = await start({
      enabled: ["files__hang", "files__read_state"],
      servers: { files: stdioServer({ confirm: "never", timeout_s: 1 }) },
    });
    const started = Date.now();
    expect((await h.ask("hang")).stdout).toMatch(/error: timed out after 1 s/);
    expect(Date.now() - started).toBeLessThan(5000);
    await waitFor(() => ledger().includes("hang cancelled"), { everyMs: 25, message: "ledger().includes('hang cancelled')" });
    model.script(call("files__read_state", { entity: "sensor.door" }));
    expect((await h.ask("still there?")).stdout).toMatch(/sensor\.door is on/);

    model.script(call("files__hang"));
    const socket = createConnection(h.socketPath);
    socket.write(`${JSON.stringify({ v: 1, id: "1", op: "ask", session: "s", text: "hang again" })}\n`);
    await waitFor(() => ledger().filter((l) => l === "hang started").length === 2, {
      everyMs: 25,
      message: "ledger().filter((l) => l === 'hang started').length === 2",
    });
    socket.write(`${JSON.stringify({ v: 1, id: "2", op: "stop", session: "s" })}\n`);
    await waitFor(() => ledger().filter((l) => l === "hang cancelled").length === 2, {
      everyMs: 25,
      message: "ledger().filter((l) => l === 'hang cancelled').length === 2",
    });
    socket.destroy();
  });

  it("says the server is not connected while it is down, restarts it, and serves its tools again", async () => {
    model.script(call("files__crash"));
    const h = await start({ enabled: ["files__*"], servers: { files: stdioServer({ confirm: "never" }) } });
    writeFileSync(downFile(), "");
    expect((await h.ask("crash")).stdout).toMatch(/Results: error: /);
    await h.waitForLog((l) => l.msg === "mcp server not connected; retrying");
    model.script(call("files__read_state", { entity: "light.hall" }));
    expect((await h.ask("look")).stdout).toMatch(/error: server files is not connected \(/);
    const tools = JSON.parse((await h.cli(["tools", "--json"])).stdout) as { tools: { name: string }[]; servers: { last_error: string }[] };
    expect(tools.tools.map((t) => t.name)).toContain("files__read_state");
    expect(tools.servers[0]?.last_error).toBeTruthy();
    rmSync(downFile());
    const connects = () => h.logs.filter((l) => l.msg === "mcp server connected").length;
    await waitFor(() => connects() >= 2, { everyMs: 25, message: "connects() >= 2" });
    model.script(call("files__read_state", { entity: "light.hall" }));
    expect((await h.ask("look again")).stdout).toMatch(/light\.hall is on/);
  });

  it("keeps a server's tools across a restart while it is down, and stops its processes with the daemon", async () => {
    const h = await start({ enabled: ["files__read_state"], servers: { files: stdioServer({ confirm: "never" }) } });
    const [first] = pids();
    await h.stop();
    expect(isAlive(first)).toBe(false);
    writeFileSync(downFile(), "");
    hermes = await h.restart();
    model.script(call("files__read_state", { entity: "light.hall" }));
    const reply = (await hermes.ask("look")).stdout;
    expect(reply).toMatch(/error: server files is not connected \(.*\)/);
    expect(toolNames(model.requests.at(-2))).toEqual(["files__read_state"]);
    expect(pids()).toHaveLength(1);
  });

  it("answers a call to a tool of a server that never connected (it refuses the token) with the server and why, not 'no tool named'", async () => {
    const h = await start({
      enabled: ["home__*"],
      servers: { home: homeServer({ headers: { Authorization: "Bearer wrong-token" } }) },
    });
    model.script(call("home__read_state", { entity: "light.hall" }));
    const reply = (await h.ask("look")).stdout;
    expect(reply).toMatch(/error: server home is not connected: .*401/);
    expect(reply).not.toContain("no tool named");
    // A name no configured server could have is still an unknown tool.
    model.script(call("garden__water"));
    expect((await h.ask("water")).stdout).toMatch(/error: there is no tool named 'garden__water'/);
  });

  it("shows a down server's URL with its key masked in tools and status, fix included", async () => {
    const secret = "mcp-sk-SECRET-4711";
    // Port 9 is closed: the server stays down, and its report says which URL to check.
    const h = await start({ enabled: ["clock"], servers: { remote: { url: `http://127.0.0.1:9/mcp?api_key=${secret}` } } });
    const shown = [
      (await h.cli(["tools", "--json"])).stdout,
      (await h.cli(["tools"])).stdout,
      (await h.cli(["status", "--json"])).stdout,
      (await h.cli(["status"])).stdout,
    ];
    const status = JSON.parse(shown[2] as string) as { mcp: { name: string; connected: boolean; fix: string | null }[] };
    expect(status.mcp).toEqual([
      expect.objectContaining({
        name: "remote",
        connected: false,
        fix: "check that http://127.0.0.1:9/mcp?api_key=******** is reachable from this host and speaks MCP",
      }),
    ]);
    expect(shown[1]).toContain("fix: check that http://127.0.0.1:9/mcp?api_key=******** is reachable");
    for (const out of shown) expect(out).not.toContain(secret);
  });

  it("shows a down stdio server's command line with its secrets masked in tools, status, doctor and config check", async () => {
    // A server that exits at once, with a token from the environment and two given as flags on its command line.
    const broken = {
      command: process.execPath,
      args: ["-e", "process.exit(3)", "--", "${HA_TOKEN}", "--token", "tok-SECRET-1", "--api-key=SECRET-2", "--keyboard", "us"],
    };
    const h = await start({ enabled: ["clock"], servers: { broken } });
    const status = JSON.parse((await h.cli(["status", "--json"])).stdout) as { mcp: { fix: string | null }[] };
    expect(status.mcp[0]?.fix).toBe(
      `run \`${process.execPath} -e process.exit(3) -- ******** --token ******** --api-key=******** --keyboard us\` by hand to see why it exits; its stderr is in the log`,
    );
    const env = { HA_TOKEN: TOKEN };
    const doctor = (await h.cli(["doctor"], { env })).stdout;
    const check = (await h.cli(["config", "check"], { env })).stdout;
    expect(doctor).toContain("--token ******** --api-key=******** --keyboard us");
    expect(check).toMatch(/- --token\n\s+- "\*{8}"\n\s+- --api-key=\*{8}\n/);
    await h.stop();
    // With no daemon to ask, doctor starts the server itself.
    const offline = (await h.cli(["doctor"], { env })).stdout;
    expect(offline).toContain("--token ******** --api-key=******** --keyboard us");
    const shown = [(await h.cli(["tools", "--json"])).stdout, (await h.cli(["tools"])).stdout, (await h.cli(["status"])).stdout];
    for (const out of [...shown, doctor, check, offline])
      for (const secret of [TOKEN, "tok-SECRET-1", "SECRET-2"]) expect(out).not.toContain(secret);
  });

  it("refuses two tools whose names collide after sanitising, naming the server's place in the config", async () => {
    const colliding = stdioServer();
    colliding.env = { ...colliding.env, MCP_COLLIDE: "1" };
    const h = await start({ enabled: ["files__*"], servers: { files: colliding } });
    const error = await h.waitForLog((l) => typeof l.msg === "string" && l.msg.includes("share a name after sanitising"));
    expect(error.msg).toMatch(/hermes\.yaml:\d+:\d+: tools of server files share a name after sanitising; refused/);
    expect(error.tools).toEqual(["files__dup_name"]);
    const listed = JSON.parse((await h.cli(["tools", "--json"])).stdout) as {
      tools: { name: string }[];
      servers: { last_error: string }[];
    };
    expect(listed.tools.map((t) => t.name)).not.toContain("files__dup_name");
    expect(listed.tools.map((t) => t.name)).toContain("files__read_state");
    expect(listed.servers[0]?.last_error).toMatch(/files__dup_name/);
  });

  it("asks for a read-only tool listed in agent.confirm, and never for one of a confirm: never server otherwise", async () => {
    const h = await start({
      enabled: ["files__read_state", "files__set_light"],
      servers: { files: stdioServer({ confirm: "never" }) },
      agent: { confirm: ["files__read_state"] },
    });
    model.script(call("files__read_state", { entity: "lock.front" }));
    const asked = await h.ask("look", "--no");
    expect(asked.stderr).toMatch(/hermes wants to run files__read_state[\s\S]*agent\.confirm/);
    model.script(call("files__set_light", { room: "hall", on: true }));
    const ran = await h.ask("light", "--no");
    expect(ran.stderr).not.toMatch(/hermes wants to run/);
    expect(ledger()).toEqual(["set_light hall true"]);
    const doctor = (await h.cli(["doctor"])).stdout;
    expect(doctor).toMatch(/✓ mcp files\s+connected \(stdio\), 11 tools, 2 enabled/);
  });

  it("lets a scheduled job use a subset of a server's tools by glob", async () => {
    hermes = await useHermes(
      {
        ...baseSettings(model.url),
        tools: { enabled: ["clock", "files__*"] },
        mcp: { servers: { files: stdioServer({ confirm: "never" }) } },
        connectors: {
          cron: {
            enabled: true,
            jobs: [{ name: "look", schedule: "0 3 * * *", prompt: "look", deliver: "cli:x", tools: ["files__read_*"] }],
          },
        },
      },
      { dir },
    );
    model.script(call("files__read_state", { entity: "sensor.rain" }));
    const run = await hermes.cli(["schedules", "run", "look"]);
    expect(run.stdout).toMatch(/look: ok/);
    expect(toolNames(model.requests[0])).toEqual(["files__read_state"]);
    expect(model.requests[1]?.messages.at(-1)?.content).toBe('sensor.rain is on\n{"entity":"sensor.rain","state":"on"}');
  });

  it("lets a webhook use a subset of a server's tools by glob, like a job", async () => {
    const hook = { name: "rain", prompt: "look", deliver: "cli:x", tools: ["files__read_*"] };
    hermes = await useHermes(
      {
        ...baseSettings(model.url),
        tools: { enabled: ["clock", "files__*"] },
        mcp: { servers: { files: stdioServer({ confirm: "never" }) } },
        connectors: { cron: { enabled: false }, http: httpSettings([hook]) },
      },
      { dir: dir, env: httpEnv },
    );
    model.script(call("files__read_state", { entity: "sensor.rain" }));
    const res = await fetch(`${await baseUrlOf(hermes)}/v1/hooks/rain`, {
      method: "POST",
      headers: { ...bearer(), "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(202);
    await hermes.waitForLog((l) => l.msg === "hook reply delivered" || l.msg === "hook ran but its reply could not be delivered");
    expect(toolNames(model.requests[0])).toEqual(["files__read_state"]);
  });

  it("applies a reloaded config (SIGHUP): a wider enable list shows more tools, from the server process already running", async () => {
    const h = await start({ enabled: ["files__read_state"], servers: { files: stdioServer() } });
    const names = async () =>
      (JSON.parse((await h.cli(["tools", "--json"])).stdout) as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(await names()).toEqual(["files__read_state"]);
    writeConfig(dir, {
      ...baseSettings(model.url),
      tools: { enabled: ["files__read_state", "files__set_light"] },
      mcp: { servers: { files: stdioServer() } },
    });
    h.process.kill("SIGHUP");
    await h.waitForLog((l) => l.msg === "config reloaded");
    expect((await names()).sort()).toEqual(["files__read_state", "files__set_light"]);
    model.script(call("files__read_state", { entity: "light.attic" }));
    expect((await h.ask("look")).stdout).toMatch(/light\.attic is on/);
    // The server's own settings did not change: it was neither stopped nor started again.
    expect(pids()).toHaveLength(1);
    expect(isAlive(pids()[0])).toBe(true);
    expect(h.logs.filter((l) => l.msg === "mcp server connected")).toHaveLength(1);
  });

  it("picks up a changed tool list (notifications/tools/list_changed)", async () => {
    model.script(call("files__grow"));
    const h = await start({ enabled: ["files__*"], servers: { files: stdioServer({ confirm: "never" }) } });
    expect(toolNames(await askAndGetRequest(h, model, "grow"))).not.toContain("files__extra");
    await waitFor(() => h.logs.filter((l) => l.msg === "mcp tool list loaded").length >= 2, {
      everyMs: 25,
      message: "h.logs.filter((l) => l.msg === 'mcp tool list loaded').length >= 2",
    });
    model.script(call("files__extra"));
    const req = await askAndGetRequest(h, model, "use it");
    expect(toolNames(req)).toContain("files__extra");
    expect(model.requests.at(-1)?.messages.at(-1)?.content).toBe("extra ran");
  });

  it("survives a server that answers with invalid JSON-RPC or an endless line: one error result, and the next call works", async () => {
    model.script(call("files__garbage"));
    // A call timeout far longer than the flood takes: the error below is the closed connection, not the timeout.
    const h = await start({ enabled: ["files__*"], servers: { files: stdioServer({ confirm: "never", timeout_s: 20 }) } });
    const garbage = (await h.ask("garbage")).stdout;
    expect(garbage).toMatch(/Results: error: server files sent a reply that is not a valid MCP tool result \(content: .*expected array/);
    model.script(call("files__read_state", { entity: "light.porch" }));
    expect((await h.ask("look")).stdout).toMatch(/light\.porch is on/);

    model.script(call("files__flood"));
    const flood = (await h.ask("flood")).stdout;
    expect(flood).toMatch(/Results: error: /);
    expect(flood).toMatch(/error: MCP error -32000: Connection closed/);
    await h.waitForLog((l) => l.msg === "mcp protocol error" && /ReadBuffer exceeded maximum size/.test(String(l.detail)));
    await waitFor(() => h.logs.filter((l) => l.msg === "mcp server connected").length >= 2, {
      everyMs: 25,
      message: "h.logs.filter((l) => l.msg === 'mcp server connected').length >= 2",
    });
    model.script(call("files__read_state", { entity: "light.porch" }));
    expect((await h.ask("look again")).stdout).toMatch(/light\.porch is on/);
    expect(h.process.exitCode).toBeNull();
  });

  it("cuts off a remote server's answer over 10 MB: the call fails (by its timeout), the log says why, and the next call works", async () => {
    const h = await start({
      enabled: ["home__huge", "home__read_state"],
      servers: { home: homeServer({ confirm: "never", timeout_s: 3 }) },
    });
    model.script(call("home__huge", { mb: 11 }));
    const huge = (await h.ask("huge")).stdout;
    expect(huge).toMatch(/Results: error: /);
    expect(huge).not.toMatch(/x{1000}/);
    expect(h.logs.some((l) => l.msg === "mcp protocol error" && /over 10 MB; it was cut off/.test(String(l.detail)))).toBe(true);
    model.script(call("home__read_state", { entity: "light.porch" }));
    expect((await h.ask("look")).stdout).toMatch(/light\.porch is on/);
    expect(h.process.exitCode).toBeNull();
  });

  it("is READY before a slow server has started, and the first message still has its tools", async () => {
    // Slow enough to start after READY, soon enough for the ~3 s the first run waits on a busy machine.
    const slow = stdioServer({ env: { ...stdioServer().env, MCP_START_DELAY_MS: "1200" } });
    const h = await start({ enabled: ["clock", "home__read_state"], servers: { home: slow } }, false);
    expect(h.logs.some((l) => l.msg === "mcp server connected")).toBe(false);
    model.script(call("home__read_state", { entity: "light.porch" }));
    expect((await h.ask("is the porch light on?")).stdout).toMatch(/light\.porch is on/);
    expect(toolNames(model.requests[0])).toContain("home__read_state");
    const order = h.logs.map((l) => l.msg);
    expect(order.indexOf("hermes is ready")).toBeLessThan(order.indexOf("mcp server connected"));
  });

  it("does not hold READY for a server that never answers, the daemon answers meanwhile, and its stop ends that server", async () => {
    // A server that pays no heed to its input closing: it outlived the daemon's stop.
    const pidFile = join(dir, "silent.pid");
    const script = "require('fs').writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1000)";
    const silent = { command: process.execPath, args: ["-e", script, pidFile], timeout_s: 30 };
    const before = Date.now();
    const h = await start({ enabled: ["clock", "mute__*"], servers: { mute: silent } }, false);
    // READY does not wait for servers, and the first run waits ~3 s at most; the rest is a busy machine.
    expect(Date.now() - before).toBeLessThan(7000);
    const status = JSON.parse((await h.cli(["status", "--json"])).stdout) as { mcp: { name: string; connected: boolean }[] };
    expect(status.mcp).toEqual([expect.objectContaining({ name: "mute", connected: false })]);
    expect((await h.ask("hi")).stdout).toMatch(/^Results:/);
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(await h.stop()).toBe(0);
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(false);
  });

  it("starts a new session when a remote server forgot ours (it restarted) and sends the call again, once", async () => {
    const h = await start({ enabled: ["home__set_light"], servers: { home: homeServer({ confirm: "never" }) } });
    http.forgetSessions();
    model.script(call("home__set_light", { room: "porch", on: true }));
    expect((await h.ask("porch light")).stdout).toMatch(/the porch light is now on/);
    expect(ledger()).toEqual(["set_light porch true"]);
    expect(h.logs.some((l) => l.msg === "mcp server forgot the session; starting a new one")).toBe(true);
  });

  it("falls back to the older HTTP+SSE transport for a server that does not speak Streamable HTTP", async () => {
    const old = await useMcpHttp({ token: TOKEN, ledger: join(dir, "ledger.txt"), legacy: true });
    model.script(call("old__read_state", { entity: "switch.garage" }));
    const h = await start({
      enabled: ["old__read_state"],
      servers: { old: { url: old.url, headers: { Authorization: "Bearer ${HA_TOKEN}" } } },
    });
    const status = JSON.parse((await h.cli(["status", "--json"])).stdout) as { mcp: { transport: string; connected: boolean }[] };
    expect(status.mcp).toEqual([expect.objectContaining({ transport: "sse", connected: true })]);
    const garage = (await h.ask("garage?")).stdout;
    expect(garage).toMatch(/switch\.garage is on/);
    expect(h.logs.filter((l) => l.msg === "mcp server connected")).toHaveLength(1);
    expect(h.logs.some((l) => l.msg === "mcp server not connected; retrying")).toBe(false);
    expect(old.authorizations.length).toBeGreaterThan(2);
    expect(old.authorizations.every((a) => a === `Bearer ${TOKEN}`)).toBe(true);
  });

  it("refuses an enable entry for a server that is not configured, naming file:line:col", async () => {
    const result = await useHermes({ ...baseSettings(model.url), tools: { enabled: ["clock", "nas__*"] } }, { dir }).catch(
      (err: Error) => err,
    );
    expect(String(result)).toMatch(/hermes\.yaml:\d+:\d+.*tools\.enabled\.1.*names MCP server 'nas'/s);
  });
});

async function askAndGetRequest(h: Hermes, model: FakeModel, text: string): Promise<RecordedRequest | undefined> {
  const from = model.requests.length;
  await h.ask(text);
  return model.requests[from];
}

function isAlive(pid: number | undefined): boolean {
  try {
    process.kill(pid ?? -1, 0);
    return true;
  } catch {
    return false;
  }
}
