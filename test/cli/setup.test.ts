// `hermes setup` typed at through a pseudo-terminal, against the fake Ollama and the fake Bot API: the
// answers are checked live, the config and the 0600 environment file are written, the owner is paired,
// and a second run changes only what it is asked about.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, onTestFailed } from "vitest";
import { parse } from "yaml";
import { DEFAULT_TOOLS } from "../../src/config/schema.js";
import { DISCORD_TOKEN, startFakeDiscord } from "../fakes/discord-server.js";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { type FakeTelegram, startFakeTelegram, TOKEN } from "../fakes/telegram-server.js";
import { createTempDir, runCli } from "../helpers/hermes.js";
import { terminal } from "../helpers/terminal.js";

/** Output lines without their indentation. */
const lines = (text: string) => text.split("\n").map((l) => l.trim());

const OWNER = 42;

describe("hermes setup", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  let home: { path: string; cleanup: () => void };
  let configPath: string;
  let env: NodeJS.ProcessEnv;

  beforeEach(async () => {
    model = await startFakeModel();
    model.models = ["llava:7b", "qwen3:8b"];
    model.capabilities = { "llava:7b": ["completion", "vision"], "qwen3:8b": ["completion", "tools"] };
    telegram = await startFakeTelegram();
    home = createTempDir();
    env = { HOME: home.path, XDG_CONFIG_HOME: "", HERMES_CONFIG: "" };
    configPath = join(home.path, ".config/hermes/hermes.yaml");
    // The owner's own line (and where the fake Bot API is): setup keeps it.
    mkdirSync(join(home.path, ".config/hermes"), { recursive: true });
    writeFileSync(
      configPath,
      `# my own note, kept\nconnectors:\n  telegram:\n    api_root: ${telegram.apiRoot} # the fake\n    poll_timeout_s: 1\n`,
    );
  });
  afterEach(async () => {
    await telegram.close();
    await model.close();
    home.cleanup();
  });

  it("asks, checks each answer live, writes the config and a 0600 env file, and pairs the owner", async () => {
    const t = terminal(["setup"], env);
    onTestFailed(() => console.log(t.output()));
    await t.expect(/Ollama URL \[http:\/\/127\.0\.0\.1:11434\]: $/m);
    t.type("http://127.0.0.1:1"); // nothing listens there
    await t.expect(/✗ cannot reach Ollama at http:\/\/127\.0\.0\.1:1 .*\n/);
    await t.expect(/Ollama URL .*: $/m);
    t.type(model.url);
    await t.expect(/1\. llava:7b {2}vision\n {2}2\. qwen3:8b {2}tools/);
    await t.expect(/Model \(number or name\) \[qwen3:8b\]: $/m);
    t.type("2");
    await t.expect(/Telegram bot token .*: $/m);
    t.type("123:not-a-token");
    await t.expect(/✗ that does not look like a bot token/);
    await t.expect(/Telegram bot token .*: $/m);
    t.type(TOKEN);
    await t.expect(/✓ Telegram bot @hermes_test_bot \(hermes\)/);
    await t.expect(/Discord bot token .*: $/m);
    t.type("");
    await t.expect(/Time zone \[.*\]: $/m);
    t.type("Mars/Olympus");
    await t.expect(/✗ Mars\/Olympus is not a time zone/);
    t.type("Europe/Berlin");
    await t.expect(/Pair your Telegram account now\? \(Y\/n\) \[Y\]: $/m);
    t.type("");
    const code = (await t.expect(/^ {4}(\d{6})\s*$/m))[1] as string;
    telegram.sendText(OWNER, code);
    await t.expect(/✓ paired Telegram user 42 \(user42\)/);
    await t.expect(/A morning briefing at \(HH:MM, or off\) \[07:00\]: $/m);
    t.type("");
    await t.expect(/Weather for \(a place name\).*: $/m);
    t.type("Berlin");
    await t.expect(/hermes start/);
    expect(await t.exit).toBe(0);

    const text = readFileSync(configPath, "utf8");
    expect(text).toContain("# my own note, kept");
    expect(text).toContain("token: ${TELEGRAM_BOT_TOKEN}");
    expect(text).not.toContain(TOKEN);
    const config = parse(text);
    expect(config.model).toMatchObject({ base_url: model.url, name: "qwen3:8b" });
    expect(config.timezone).toBe("Europe/Berlin");
    expect(config.connectors.telegram).toMatchObject({
      enabled: true,
      api_root: telegram.apiRoot,
      allowed_users: [{ id: OWNER, name: "user42" }],
    });
    expect(config.connectors.cron.jobs).toEqual([
      expect.objectContaining({ name: "morning-briefing", schedule: "0 7 * * *", deliver: "telegram:42" }),
    ]);
    expect(config.tools.weather.location).toBe("Berlin");
    const envFile = join(home.path, ".config/hermes/hermes.env");
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(envFile, "utf8")).toContain(`TELEGRAM_BOT_TOKEN=${TOKEN}`);
    expect(await telegram.waitFor((c) => c.method === "sendMessage" && Number(c.params.chat_id) === OWNER)).toBeTruthy();
    // What setup wrote is a valid config, found from any directory, its secrets read from hermes.env.
    const check = await runCli(["config", "check"], { env, cwd: home.path });
    expect(check.stderr).toBe("");
    expect(check.stdout).toContain(`# ${configPath}: valid`);

    // A second run, for the time zone only: the rest stays as it was. A zone typed in another case is
    // written in its own spelling (TZ takes no other: the daemon's clock would run on UTC).
    const before = parse(readFileSync(configPath, "utf8"));
    const second = await runCli(["setup", "timezone", "--timezone", "america/new_york", "--non-interactive"], { env, cwd: home.path });
    expect(second.code).toBe(0);
    const after = readFileSync(configPath, "utf8");
    expect(parse(after)).toEqual({ ...before, timezone: "America/New_York" });
    expect(after).toContain("# my own note, kept");
    expect(readFileSync(envFile, "utf8")).toContain(`TELEGRAM_BOT_TOKEN=${TOKEN}`);
    // hermes.env, from the first run, is named among the files to move for the service.
    expect(lines(second.stdout)).toContain(`${configPath} and ${envFile} over as docs/deployment.md says`);
  }, 60_000);

  it("Ctrl-D on a terminal stops setup, saying whether anything was written", async () => {
    const before = readFileSync(configPath, "utf8");
    const first = terminal(["setup", "timezone"], env);
    onTestFailed(() => console.log(first.output()));
    await first.expect(/Time zone \[.*\]: $/m);
    first.keys("\u0004");
    expect(await first.exit).toBe(1);
    expect(first.output()).toContain('setup stopped at "Time zone" (the input ended): nothing was written');
    expect(first.output()).not.toContain("--non-interactive");
    expect(readFileSync(configPath, "utf8")).toBe(before);

    const second = terminal(["setup", "timezone", "briefing"], env);
    onTestFailed(() => console.log(second.output()));
    await second.expect(/Time zone \[.*\]: $/m);
    second.type("Europe/Berlin");
    await second.expect(/A morning briefing at \(HH:MM, or off\) \[07:00\]: $/m);
    second.keys("\u0004");
    expect(await second.exit).toBe(1);
    expect(second.output()).toContain(`setup stopped at "A morning briefing at (HH:MM, or off)" (the input ended): ${configPath} keeps`);
    expect(parse(readFileSync(configPath, "utf8"))).toMatchObject({ timezone: "Europe/Berlin" });
  });

  it("takes answers piped in, each after the live check before it, and fails (not 0) when they run out", async () => {
    const piped = await runCli(["setup", "model", "timezone"], { env, input: `${model.url}\n2\neurope/berlin\n` });
    expect(piped.stderr).toBe("");
    expect(piped.code).toBe(0);
    expect(parse(readFileSync(configPath, "utf8"))).toMatchObject({ model: { name: "qwen3:8b" }, timezone: "Europe/Berlin" });
    // A script that forgot --non-interactive: nothing to read, so no exit 0 with nothing written.
    const fresh = join(home.path, "elsewhere", "hermes.yaml");
    const empty = await runCli(["setup", "--config", fresh], { env, input: "" });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('the input ended before an answer to "Ollama URL"');
    expect(empty.stderr).toContain("--non-interactive");
    expect(existsSync(fresh)).toBe(false);
  });

  it("names no hermes.env among the files to move when none was written", async () => {
    const fresh = join(home.path, "fresh/hermes.yaml");
    const result = await runCli(["setup", "timezone", "--timezone", "Europe/Berlin", "--non-interactive", "--config", fresh], { env });
    expect(result.code).toBe(0);
    expect(existsSync(join(home.path, "fresh/hermes.env"))).toBe(false);
    expect(lines(result.stdout)).toContain(`${fresh} over as docs/deployment.md says`);
    expect(result.stdout).not.toContain("hermes.env");
  });

  it("a fresh config enables the schema's default tools (recall and skill among them) and memory", async () => {
    const fresh = join(home.path, "fresh/hermes.yaml");
    const result = await runCli(["setup", "timezone", "--timezone", "Europe/Berlin", "--non-interactive", "--config", fresh], { env });
    expect(result.code).toBe(0);
    const enabled = parse(readFileSync(fresh, "utf8")).tools.enabled as string[];
    expect(enabled).toEqual(expect.arrayContaining(["recall", "skill", "memory"]));
    expect(enabled).toEqual([...DEFAULT_TOOLS, "memory"]);
  });

  it("a re-run keeps an owner's own briefing: Enter keeps it, a time changes only its minute and hour, off removes only it", async () => {
    const own = [
      "connectors:",
      "  telegram:",
      "    enabled: true",
      "    allowed_users: [42]",
      "  cron:",
      "    enabled: true",
      "    jobs:",
      "      - name: morning-briefing # mine",
      '        schedule: "30 6 * * 1-5" # weekdays',
      "        prompt: My own briefing, with the calendar and the news.",
      "        tools: [calendar, feeds]",
      '        deliver: "telegram:-100222333" # the family group',
      "      - name: evening",
      '        schedule: "0 7,19 * * *"',
      "        prompt: Evening check.",
      "",
    ].join("\n");
    writeFileSync(configPath, own);
    const run = (...args: string[]) => runCli(["setup", "briefing", ...args, "--non-interactive"], { env, cwd: home.path });
    const jobs = () => parse(readFileSync(configPath, "utf8")).connectors.cron.jobs as Record<string, unknown>[];
    const mine = jobs()[0];

    expect((await run()).code).toBe(0); // Enter: as it is
    expect(jobs()).toEqual(parse(own).connectors.cron.jobs);
    expect((await run("--briefing", "06:30")).code).toBe(0); // its own time again
    expect(jobs()).toEqual(parse(own).connectors.cron.jobs);

    const moved = await run("--briefing", "7:15");
    expect(moved.code).toBe(0);
    expect(jobs()).toEqual([{ ...mine, schedule: "15 7 * * 1-5" }, parse(own).connectors.cron.jobs[1]]);
    const text = readFileSync(configPath, "utf8");
    for (const comment of ["# mine", "# weekdays", "# the family group"]) expect(text).toContain(comment);

    // A schedule that is no time of day is offered as it is; Enter keeps it, a new time keeps its days.
    writeFileSync(configPath, own.replace('"30 6 * * 1-5"', '"0 7,19 * * 1-5"'));
    const odd = await run();
    expect(odd.code).toBe(0);
    expect(jobs()[0]).toEqual({ ...mine, schedule: "0 7,19 * * 1-5" });
    expect((await run("--briefing", "08:00")).code).toBe(0);
    expect(jobs()[0]).toEqual({ ...mine, schedule: "0 8 * * 1-5" });
    writeFileSync(configPath, own.replace('"30 6 * * 1-5"', '"@daily"'));
    const daily = await run("--briefing", "08:00");
    expect(daily.code).toBe(1);
    expect(daily.stderr).toMatch(/"@daily" is not five cron fields/);
    expect(jobs()[0]).toEqual({ ...mine, schedule: "@daily" });

    expect((await run("--briefing", "off")).code).toBe(0);
    expect(jobs()).toEqual([parse(own).connectors.cron.jobs[1]]);
  });

  it("asks the briefing's time again after an answer that is no time of day, as it does the time zone", async () => {
    writeFileSync(
      configPath,
      'connectors:\n  cron:\n    jobs:\n      - name: morning-briefing\n        schedule: "0 7 * * *"\n        prompt: Hi.\n',
    );
    const typo = await runCli(["setup", "briefing"], { env, cwd: home.path, input: "7am\n08:30\n" });
    expect(typo.stderr).toBe("");
    expect(typo.code).toBe(0);
    expect(typo.stdout).toContain("✗ 7am is not a time of day (say 07:00, or off)");
    expect(parse(readFileSync(configPath, "utf8")).connectors.cron.jobs[0].schedule).toBe("30 8 * * *");
  });

  it("a re-run moves a token written into the config itself to hermes.env, leaving ${VAR} in its place", async () => {
    writeFileSync(configPath, `connectors:\n  telegram:\n    enabled: true\n    api_root: ${telegram.apiRoot}\n    token: "${TOKEN}"\n`);
    const run = await runCli(["setup", "telegram", "--non-interactive"], { env, cwd: home.path });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("✓ Telegram bot @hermes_test_bot");
    const text = readFileSync(configPath, "utf8");
    expect(text).not.toContain(TOKEN);
    expect(parse(text).connectors.telegram.token).toBe("${TELEGRAM_BOT_TOKEN}");
    const envFile = join(home.path, ".config/hermes/hermes.env");
    expect(readFileSync(envFile, "utf8")).toContain(`TELEGRAM_BOT_TOKEN=${TOKEN}`);
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
  });

  it("does not take digits sent before the code was shown as tries at it (five would void the pairing)", async () => {
    const hourAgo = Math.floor(Date.now() / 1000) - 3600;
    for (let i = 0; i < 5; i++) telegram.sendMessage(OWNER, { text: "123456", date: hourAgo });
    const t = terminal(["setup", "telegram", "--telegram-token", TOKEN, "--pair", "--non-interactive"], env, home.path);
    onTestFailed(() => console.log(t.output()));
    const code = (await t.expect(/^ {4}(\d{6})\s*$/m))[1] as string;
    telegram.sendText(OWNER, code);
    await t.expect(/✓ paired Telegram user 42/);
    expect(await t.exit).toBe(0);
    expect(telegram.messagesTo(OWNER).map((c) => String(c.params.text))).toEqual([
      "You are paired: once hermes runs, write to me any time.",
    ]);
  });

  it("takes the code when the computer's clock is ahead of Telegram's (its message's date is before the code was shown)", async () => {
    const t = terminal(["setup", "telegram", "--telegram-token", TOKEN, "--pair", "--non-interactive"], env, home.path);
    onTestFailed(() => console.log(t.output()));
    const code = (await t.expect(/^ {4}(\d{6})\s*$/m))[1] as string;
    telegram.sendMessage(OWNER, { text: code, date: Math.floor(Date.now() / 1000) - 120 });
    await t.expect(/✓ paired Telegram user 42/);
    expect(await t.exit).toBe(0);
  });

  it("a Telegram lost while pairing ends the pairing with how to pair later, not setup with a bare error", async () => {
    const run = runCli(["setup", "telegram", "--telegram-token", TOKEN, "--pair", "--non-interactive"], { env, cwd: home.path });
    await telegram.waitFor((c) => c.method === "getUpdates");
    await telegram.close();
    const result = await run;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/✗ Telegram could not be reached \(.+\); pair later with `hermes pair telegram`/);
    expect(parse(readFileSync(configPath, "utf8")).connectors.telegram).toMatchObject({ enabled: true, allowed_users: [] });
  });

  it("a re-run keeps a chat that was turned off, off, though its token is kept", async () => {
    writeFileSync(
      configPath,
      `connectors:\n  telegram:\n    enabled: false # for now\n    api_root: ${telegram.apiRoot}\n  discord:\n    enabled: false\n`,
    );
    writeFileSync(join(home.path, ".config/hermes/hermes.env"), `TELEGRAM_BOT_TOKEN=${TOKEN}\nDISCORD_BOT_TOKEN=d.token\n`, {
      mode: 0o600,
    });
    const run = await runCli(["setup", "telegram", "discord", "--non-interactive"], { env, cwd: home.path });
    expect(run.code).toBe(0);
    expect(lines(run.stdout)).toEqual(expect.arrayContaining(["- Telegram stays off", "- Discord stays off"]));
    const connectors = parse(readFileSync(configPath, "utf8")).connectors;
    expect(connectors.telegram.enabled).toBe(false);
    expect(connectors.discord.enabled).toBe(false);
    // A token given turns it on.
    const on = await runCli(["setup", "telegram", "--telegram-token", TOKEN, "--non-interactive"], { env, cwd: home.path });
    expect(on.code).toBe(0);
    expect(parse(readFileSync(configPath, "utf8")).connectors.telegram.enabled).toBe(true);
  });

  it("with provider openai, lists the server's models at /v1/models with the config's key", async () => {
    model.apiKey = "sk-local";
    writeFileSync(configPath, "model:\n  provider: openai # llama.cpp\n  api_key: ${OPENAI_API_KEY}\n");
    const envFile = join(home.path, ".config/hermes/hermes.env");
    writeFileSync(envFile, "OPENAI_API_KEY=wrong\n", { mode: 0o600 });
    const args = ["setup", "model", "--model-url", `${model.url}/v1`, "--model", "qwen3:8b", "--non-interactive"];
    const refused = await runCli(args, { env, cwd: home.path });
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toMatch(/refused the API key \(401\)/);
    writeFileSync(envFile, "OPENAI_API_KEY=sk-local\n", { mode: 0o600 });
    const run = await runCli(args, { env, cwd: home.path });
    expect(run.code).toBe(0);
    expect(lines(run.stdout)).toEqual(expect.arrayContaining(["1. llava:7b", "2. qwen3:8b", "✓ model qwen3:8b"]));
    const text = readFileSync(configPath, "utf8");
    expect(parse(text).model).toEqual({ provider: "openai", api_key: "${OPENAI_API_KEY}", base_url: `${model.url}/v1`, name: "qwen3:8b" });
    expect(text).toContain("# llama.cpp");
  });

  it("checks a Discord token live before it is saved", async () => {
    const discord = await startFakeDiscord();
    try {
      writeFileSync(configPath, `connectors:\n  discord:\n    api_root: ${discord.apiRoot}\n`);
      const run = (token: string) => runCli(["setup", "discord", "--discord-token", token, "--non-interactive"], { env, cwd: home.path });
      const malformed = await run("not-a-token");
      expect(malformed.code).toBe(1);
      expect(malformed.stdout).toContain("✗ that does not look like a bot token");
      const wrong = await run(`${DISCORD_TOKEN.slice(0, -5)}xxxxx`);
      expect(wrong.code).toBe(1);
      expect(wrong.stdout).toContain("✗ Discord rejected the token (401)");
      expect(existsSync(join(home.path, ".config/hermes/hermes.env"))).toBe(false);
      const right = await run(DISCORD_TOKEN);
      expect(right.code).toBe(0);
      expect(lines(right.stdout)).toContain("✓ Discord bot hermes; pair with `hermes pair discord` once hermes runs");
      expect(parse(readFileSync(configPath, "utf8")).connectors.discord).toMatchObject({ enabled: true, token: "${DISCORD_BOT_TOKEN}" });
    } finally {
      await discord.close();
    }
  });

  it("never prints a password in the model URL it could not reach", async () => {
    for (const config of ["", "model:\n  provider: openai\n"]) {
      writeFileSync(configPath, config);
      writeFileSync(join(home.path, ".config/hermes/hermes.env"), "MODEL_PASS=sekrit-pass\n", { mode: 0o600 });
      const url = config ? "http://me:${MODEL_PASS}@127.0.0.1:1/v1" : "http://me:${MODEL_PASS}@127.0.0.1:1";
      const run = await runCli(["setup", "model", "--model-url", url, "--non-interactive"], { env, cwd: home.path });
      expect(run.code).toBe(1);
      expect(run.stdout + run.stderr).toMatch(/me:\*+@127\.0\.0\.1:1/);
      expect(run.stdout + run.stderr).not.toContain("sekrit");
    }
  });

  it("with no model pulled, says which `ollama pull` to run", async () => {
    model.models = [];
    const result = await runCli(["setup", "model", "--model-url", model.url, "--non-interactive"], { env });
    expect(result.stdout).toContain("ollama pull qwen3:8b");
  });
});
