// `hermes pair` against the real daemon and the fake Bot API / fake Discord: the code, wrong codes, the
// timeout, the config file's comments and ${VAR}s kept, the daemon reloaded without a restart; `/whoami`.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { addAllowedUser } from "../../src/cli/allowed-users.js";
import { spanOf } from "../../src/cli/pair.js";
import { DISCORD_TOKEN, type FakeDiscord, startFakeDiscord } from "../fakes/discord-server.js";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { type FakeTelegram, startFakeTelegram, TOKEN } from "../fakes/telegram-server.js";
import { CLI, createTempDir, type Hermes, launch, runCli } from "../helpers/hermes.js";

const OWNER = 42;
const STRANGER = 7;

function telegramConfig(model: FakeModel, telegram: FakeTelegram): string {
  return `# my hermes: every comment here must survive pairing
timezone: Europe/Berlin
model: { provider: ollama, base_url: ${model.url}, name: hermes3:8b, retries: 2, retry_base_ms: 20, timeout_s: 20 }

connectors:
  cron: { enabled: false }
  telegram:
    enabled: true
    token: \${TG_TOKEN} # read from the environment, never written here
    api_root: ${telegram.apiRoot}
    poll_timeout_s: 1
    stream_replies: false
    allowed_users: [${OWNER}] # the owner
log: { level: info } # trailing comment
`;
}

/** `hermes pair ARGS` as a child; `code` resolves the code it prints, `exit` its end. */
function startPair(configPath: string, args: string[]) {
  const child: ChildProcess = spawn(process.execPath, [CLI, "pair", ...args, "--config", configPath], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let onOut = () => {};
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
    onOut();
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const exit = new Promise<{ code: number | null; stdout: string; stderr: string }>((r) =>
    child.on("close", (code) => r({ code, stdout, stderr })),
  );
  const code = new Promise<string>((resolve, reject) => {
    onOut = () => {
      const m = stdout.match(/^ {4}(\d{6})$/m);
      if (m) resolve(m[1] as string);
    };
    void exit.then((e) => reject(new Error(`hermes pair ended first: ${e.stderr}`)));
  });
  return { code, exit, child };
}

describe("hermes pair telegram", () => {
  let model: FakeModel;
  let telegram: FakeTelegram;
  let hermes: Hermes | undefined;
  let dir: { path: string; cleanup: () => void };
  let configPath: string;
  let original: string;

  beforeEach(async () => {
    model = await startFakeModel();
    telegram = await startFakeTelegram();
    dir = createTempDir();
    configPath = join(dir.path, "hermes.yaml");
    original = telegramConfig(model, telegram);
    writeFileSync(configPath, original);
    hermes = await launch(dir.path, configPath, { TG_TOKEN: TOKEN });
    await telegram.waitFor((c) => c.method === "getUpdates");
  });
  afterEach(async () => {
    await hermes?.stop();
    await telegram.close();
    await model.close();
    dir.cleanup();
  });
  const sentTo = (chat: number, predicate: (text: string) => boolean) =>
    telegram.waitFor((c) => c.method === "sendMessage" && Number(c.params.chat_id) === chat && predicate(String(c.params.text)));

  it("voids the code when `hermes pair` is stopped: sent later, it pairs nobody", async () => {
    const run = startPair(configPath, ["telegram", "--timeout-s", "600"]);
    const code = await run.code;
    run.child.kill("SIGINT");
    await run.exit;
    await hermes?.waitForLog((l) => l.msg === "pairing ended" && l.reason === "cancelled");
    telegram.sendText(STRANGER, code);
    expect(await sentTo(STRANGER, (t) => t.includes(`Your Telegram id is ${STRANGER}`))).toBeTruthy();
    expect(telegram.messagesTo(STRANGER).some((c) => String(c.params.text).includes("Code accepted"))).toBe(false);
    expect(readFileSync(configPath, "utf8")).toBe(original);
  });

  it("adds the user who sends the code, keeps the rest of the file as written, and reloads without a restart", async () => {
    const pid = hermes?.process.pid;
    const run = startPair(configPath, ["telegram", "--name", "Alice", "--timeout-s", "60"]);
    const code = await run.code;
    const wrong = code === "123456" ? "654321" : "123456";
    telegram.sendText(STRANGER, wrong);
    await sentTo(STRANGER, (t) => t === "That is not the code. 4 tries left.");
    telegram.sendText(STRANGER, code);
    const end = await run.exit;
    expect(end.stderr).toBe("");
    expect(end.code).toBe(0);
    expect(end.stdout).toContain(`paired telegram user ${STRANGER} (Alice)`);
    expect(readFileSync(configPath, "utf8")).toBe(
      original.replace(`allowed_users: [${OWNER}] # the owner`, `allowed_users: [${OWNER}, { id: ${STRANGER}, name: Alice }] # the owner`),
    );
    await sentTo(STRANGER, (t) => t.startsWith("You are paired"));
    expect(hermes?.logs.some((l) => l.msg === "config reloaded")).toBe(true);
    // The same process now answers the new user.
    model.script({ text: "hello Alice" });
    telegram.sendText(STRANGER, "hi");
    await sentTo(STRANGER, (t) => t === "hello Alice");
    expect(hermes?.process.pid).toBe(pid);
    expect(hermes?.process.exitCode).toBeNull();
  });

  it("tells the user who sent the code that it failed when their id cannot be written into the file", async () => {
    // An alias is a list hermes reads but cannot add to without changing the rest of the file.
    const aliased = original
      .replace(
        "  cron: { enabled: false }",
        `  cron: { enabled: false }\n  discord: { enabled: false, allowed_users: &owners ["${OWNER}"] }`,
      )
      .replace(`allowed_users: [${OWNER}] # the owner`, "allowed_users: *owners # the owner");
    writeFileSync(configPath, aliased);
    const run = startPair(configPath, ["telegram", "--timeout-s", "60"]);
    telegram.sendText(STRANGER, await run.code);
    const end = await run.exit;
    expect(end.code).toBe(1);
    expect(end.stderr).toMatch(/connectors\.telegram\.allowed_users is not a list; the file is as it was/);
    expect(readFileSync(configPath, "utf8")).toBe(aliased);
    await sentTo(STRANGER, (t) => t === "Pairing failed on the server; ask the owner.");
  });

  it("five wrong codes void the pairing: exit 1, the file untouched", async () => {
    const run = startPair(configPath, ["telegram"]);
    const code = await run.code;
    const wrong = code === "111111" ? "222222" : "111111";
    for (let i = 0; i < 5; i++) telegram.sendText(STRANGER, wrong);
    const end = await run.exit;
    expect(end.code).toBe(1);
    expect(end.stderr).toContain("5 wrong codes");
    await sentTo(STRANGER, (t) => t.includes("this pairing is void"));
    // The right code after that is a stranger's message like any other.
    telegram.sendText(STRANGER, code);
    await sentTo(STRANGER, (t) => t.includes(`Your Telegram id is ${STRANGER}`));
    expect(readFileSync(configPath, "utf8")).toBe(original);
  });

  it("the timeout voids it", async () => {
    const run = startPair(configPath, ["telegram", "--timeout-s", "1"]);
    await run.code;
    const end = await run.exit;
    expect(end.code).toBe(1);
    expect(end.stdout).toContain("(within 1 s):");
    expect(end.stderr).toContain("no code arrived within 1 s");
    expect(readFileSync(configPath, "utf8")).toBe(original);
  });

  it("/whoami answers anyone with their id and whether they are allowed, and nothing reaches the model", async () => {
    telegram.sendText(STRANGER, "/whoami");
    await sentTo(STRANGER, (t) => t.startsWith(`Your Telegram id is ${STRANGER}. You are not allowed`));
    telegram.sendText(OWNER, "/whoami");
    await sentTo(OWNER, (t) => t === `Your Telegram id is ${OWNER}. You are allowed to use this assistant.`);
    expect(model.requests).toHaveLength(0);
  });
});

describe("hermes pair discord", () => {
  const OWNER_ID = "2000000000000000042";
  const NEW_ID = "2000000000000000007";
  let model: FakeModel;
  let discord: FakeDiscord;
  let hermes: Hermes | undefined;
  let dir: { path: string; cleanup: () => void };

  beforeEach(async () => {
    model = await startFakeModel();
    discord = await startFakeDiscord();
    dir = createTempDir();
  });
  afterEach(async () => {
    await hermes?.stop();
    await discord.close();
    await model.close();
    dir.cleanup();
  });

  it("adds the user to a block list of allowed_users in a DM handshake; the daemon reloads", async () => {
    const settings = discord.settings([OWNER_ID]);
    const configPath = join(dir.path, "hermes.yaml");
    const original = `model: { provider: ollama, base_url: ${model.url}, name: hermes3:8b }
connectors:
  cron: { enabled: false }
  discord:
    enabled: true
    token: "\${DC_TOKEN:-}"
    api_root: ${String(settings.api_root)}
    stream_replies: false
    allowed_users:
      - "${OWNER_ID}" # me
    # more people go above this line
log: { level: info }
`;
    writeFileSync(configPath, original);
    hermes = await launch(dir.path, configPath, { DC_TOKEN: DISCORD_TOKEN });
    await hermes.waitForLog((l) => l.msg === "discord gateway ready");
    const run = startPair(configPath, ["discord", "--name", "Bob"]);
    discord.dm(NEW_ID, await run.code);
    const end = await run.exit;
    expect(end.code).toBe(0);
    expect(readFileSync(configPath, "utf8")).toBe(
      original.replace(`      - "${OWNER_ID}" # me\n`, `      - "${OWNER_ID}" # me\n      - { id: "${NEW_ID}", name: Bob }\n`),
    );
    await discord.waitFor(
      (c) => c.method === `POST /channels/${discord.dmChannelOf(NEW_ID)}/messages` && /You are paired/.test(c.body.content),
    );
    model.script({ text: "hi Bob" });
    discord.dm(NEW_ID, "hello");
    await discord.waitFor((c) => c.method === `POST /channels/${discord.dmChannelOf(NEW_ID)}/messages` && c.body.content === "hi Bob");
  });
});

describe("hermes pair without a config file", () => {
  it("says there is none and how to write one, not to run it as the file's owner", async () => {
    const dir = createTempDir();
    try {
      const missing = join(dir.path, "hermes.yaml");
      const result = await runCli(["pair", "telegram", "--config", missing]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `hermes: no config file at ${missing}: write one with \`hermes setup\`, or pass --config PATH to the daemon's\n`,
      );
    } finally {
      dir.cleanup();
    }
  });
});

describe("the time pair gives to send the code", () => {
  it("is in seconds under a minute, and never rounded to a span it does not have", () => {
    expect([30, 59, 60, 90, 600, 0.4].map(spanOf)).toEqual(["30 s", "59 s", "1 min", "1 min 30 s", "10 min", "1 s"]);
  });
});

describe("addAllowedUser", () => {
  it("leaves a file that already has the user as it is, and adds a list where there is none", () => {
    const text = "connectors:\n  telegram: { enabled: true, allowed_users: [1, { id: 2, name: Al }] } # x\n";
    expect(addAllowedUser(text, "telegram", "2", "Al")).toBe(text);
    const none = "# top\nconnectors:\n  telegram:\n    enabled: true # on\n";
    const added = addAllowedUser(none, "telegram", "5", "Eve Smith");
    expect(added).toContain("# top");
    expect(added).toContain("enabled: true # on");
    expect(added).toContain("allowed_users: [ { id: 5, name: Eve Smith } ]");
  });

  const users = (text: string) => (parse(text) as { connectors: { telegram: { allowed_users: unknown[] } } }).connectors.telegram;

  it("quotes a name that would not read back as itself, in a flow list and in a new one", () => {
    for (const name of [
      "Smith, John",
      "Ann {x}",
      "a]b",
      "# one",
      "x: y",
      " padded ",
      "José",
      "'quoted'",
      "*star",
      "&anchor",
      "!tag",
      "@at",
    ]) {
      const flow = addAllowedUser("connectors:\n  telegram:\n    allowed_users: [111] # mine\n", "telegram", "222", name);
      expect(users(flow).allowed_users).toEqual([111, { id: 222, name }]);
      expect(flow).toContain("# mine");
      const none = addAllowedUser("connectors:\n  telegram:\n    enabled: true\n", "telegram", "222", name);
      expect(users(none).allowed_users).toEqual([{ id: 222, name }]);
    }
    expect(addAllowedUser("connectors:\n  telegram:\n    allowed_users: []\n", "telegram", "7", "Eve Smith")).toBe(
      "connectors:\n  telegram:\n    allowed_users: [{ id: 7, name: Eve Smith }]\n",
    );
  });

  it("adds the user after the list's last item, whatever it holds and whatever follows it", () => {
    const cases: [string, unknown[]][] = [
      [
        "connectors:\n  telegram:\n    allowed_users:\n      - id: 111\n        name: Alice\n    api_root: http://x\n",
        [{ id: 111, name: "Alice" }],
      ],
      [
        "connectors:\n  telegram:\n    allowed_users:\n      - id: 111\n        name: Alice\n  discord:\n    enabled: false\n",
        [{ id: 111, name: "Alice" }],
      ],
      ["connectors:\n  telegram:\n    allowed_users:\n      - id: 111\n        name: Alice\n", [{ id: 111, name: "Alice" }]],
      [
        "connectors:\n  telegram:\n    allowed_users:\n      - 5 # me\n      - { id: 111, name: Al }\n    enabled: true\n",
        [5, { id: 111, name: "Al" }],
      ],
      ["connectors:\n  telegram:\n    allowed_users: [\n      111, # me\n      333  # my wife\n    ]\n    enabled: true\n", [111, 333]],
      ["connectors:\n  telegram:\n    allowed_users: [111,]\n", [111]],
    ];
    for (const [text, before] of cases) {
      const added = addAllowedUser(text, "telegram", "222", "Smith, John");
      expect(users(added).allowed_users).toEqual([...before, { id: 222, name: "Smith, John" }]);
      const { allowed_users: _, ...rest } = users(added);
      const { allowed_users: __, ...restBefore } = users(text);
      expect(rest).toEqual(restBefore);
      expect(parse(added)).toMatchObject({ connectors: { ...(parse(text) as { connectors: object }).connectors, telegram: rest } });
      for (const comment of text.match(/#.*$/gm) ?? []) expect(added).toContain(comment);
    }
  });
});
