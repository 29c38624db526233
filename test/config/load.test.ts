import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderJsonSchema } from "../../scripts/export-schema.js";
import { parseConfig } from "../../src/config/load.js";
import { ConfigError } from "../../src/errors.js";
import { createTempDir, runCli, runNode } from "../helpers/hermes.js";

function problemsOf(text: string, env: NodeJS.ProcessEnv = {}) {
  try {
    parseConfig(text, "/etc/hermes/hermes.yaml", env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error("expected the config to be rejected");
}

describe("config loading", () => {
  it("accepts an empty file and fills in defaults that run with no edits", () => {
    const { config } = parseConfig("", "/srv/hermes/hermes.yaml", {});
    expect(config.model).toMatchObject({ provider: "ollama", base_url: "http://127.0.0.1:11434", context_tokens: 16384 });
    expect(config.connectors.cli).toEqual({ enabled: true, socket: "/srv/hermes/data/hermes.sock" });
    expect(config.connectors.telegram.enabled).toBe(false);
    expect(config.connectors.cron).toMatchObject({ enabled: true, jobs: [] });
    expect(config.storage.path).toBe("/srv/hermes/data/hermes.db");
  });

  it("accepts the repository's default hermes.yaml", () => {
    const text = readFileSync(new URL("../../hermes.yaml", import.meta.url), "utf8");
    expect(() => parseConfig(text, "hermes.yaml", {})).not.toThrow();
  });

  it("reports malformed YAML with file:line:col", () => {
    const [p] = problemsOf("model:\n  name: [unclosed\nagent: {}\n");
    expect(p?.file).toBe("/etc/hermes/hermes.yaml");
    expect(p?.line).toBeGreaterThanOrEqual(2);
    expect(p?.col).toBeGreaterThan(0);
  });

  it("reports an unknown key at its line and column with the key path", () => {
    const [p] = problemsOf("model:\n  name: x\n  temprature: 0.5\n");
    expect(p).toMatchObject({ line: 3, col: 3, path: "model.temprature" });
    expect(p?.message).toContain("unknown key 'temprature'");
  });

  it("reports a wrong type with what was expected", () => {
    const [p] = problemsOf("agent:\n  max_steps: lots\n");
    expect(p).toMatchObject({ line: 2, col: 14, path: "agent.max_steps" });
    expect(p?.message).toMatch(/expected (int|number)/);
  });

  it("accepts IANA time zones and their aliases, and names a wrong one with its place", () => {
    for (const zone of ["Europe/Berlin", "UTC", "US/Eastern", "Asia/Kolkata"]) {
      expect(parseConfig(`timezone: ${zone}\n`, "hermes.yaml", {}).config.timezone).toBe(zone);
    }
    // TZ, which a started daemon sets to this zone, takes a name in its own case only.
    expect(parseConfig("timezone: europe/berlin\n", "hermes.yaml", {}).config.timezone).toBe("Europe/Berlin");
    expect(
      parseConfig(
        "connectors: { cron: { jobs: [{ name: j, schedule: '0 7 * * *', prompt: p, deliver: 'cli:o', timezone: ASIA/TOKYO }] } }\n",
        "hermes.yaml",
        {},
      ).config.connectors.cron.jobs[0]?.timezone,
    ).toBe("Asia/Tokyo");
    const [p] = problemsOf("model:\n  name: x\ntimezone: Mars/Olympus\n");
    expect(p).toMatchObject({ line: 3, path: "timezone" });
    expect(p?.message).toContain("IANA time zone");
  });

  it("asks for Discord ids in quotes when one is too big for a number (it would be silently rounded)", () => {
    const [p] = problemsOf('connectors:\n  discord:\n    allowed_users: ["42", 123456789012345678]\n');
    expect(p).toMatchObject({ line: 3, path: "connectors.discord.allowed_users.1" });
    expect(p?.message).toContain("in quotes");
    const { config } = parseConfig('connectors:\n  discord:\n    allowed_users: ["123456789012345678", 42]\n', "hermes.yaml", {});
    expect(config.connectors.discord.allowed_users).toEqual(["123456789012345678", "42"]);
  });

  it("asks for a plugin's user id in quotes when it is too big for a number, and reads smaller ones as text", () => {
    const plugin = (users: string) => `connectors:\n  plugins:\n    - { name: phone, module: ./p.mjs, allowed_users: ${users} }\n`;
    const [p] = problemsOf(plugin('["42", 123456789012345678]'));
    expect(p).toMatchObject({ line: 3, path: "connectors.plugins.0.allowed_users.1" });
    expect(p?.message).toContain("in quotes");
    const { config } = parseConfig(plugin('["123456789012345678", 42, alice]'), "hermes.yaml", {});
    expect(config.connectors.plugins[0]?.allowed_users).toEqual(["123456789012345678", "42", "alice"]);
  });

  it("refuses a plugin named as a built-in connector or the OpenAI door, whose sessions it would share", () => {
    for (const name of ["telegram", "cron", "api"]) {
      const [p] = problemsOf(`connectors:\n  plugins:\n    - { name: ${name}, module: ./p.mjs, allowed_users: [bob] }\n`);
      expect(p).toMatchObject({ line: 3, path: "connectors.plugins.0.name" });
      expect(p?.message).toMatch(/belongs to hermes/);
    }
  });

  it("refuses a max_output_tokens that leaves the prompt under 512 of context_tokens, at its line, for fallbacks too", () => {
    const [p] = problemsOf("model:\n  context_tokens: 1024\n");
    expect(p).toMatchObject({ path: "model.max_output_tokens" });
    expect(p?.message).toContain("leaves the prompt 0 of context_tokens' 1024");
    const [f] = problemsOf("model:\n  fallbacks:\n    - { name: small, context_tokens: 2048, max_output_tokens: 1800 }\n");
    expect(f).toMatchObject({ line: 3, path: "model.fallbacks.0.max_output_tokens" });
    expect(parseConfig("model:\n  context_tokens: 2048\n  max_output_tokens: 1024\n", "hermes.yaml", {}).config.model.context_tokens).toBe(
      2048,
    );
  });

  it("takes allowed_users as bare ids or {id, name}, for Telegram and Discord", () => {
    const text = [
      "connectors:",
      "  telegram:",
      "    allowed_users: [{ id: 123456789, name: Alice }, 987654321]",
      "  discord:",
      '    allowed_users: [{ id: "123456789012345678", name: Bob }, "42"]',
    ].join("\n");
    const { telegram, discord } = parseConfig(text, "hermes.yaml", {}).config.connectors;
    expect(telegram.allowed_users).toEqual([123456789, 987654321]);
    expect(telegram.user_names).toEqual({ "123456789": "Alice" });
    expect(discord.allowed_users).toEqual(["123456789012345678", "42"]);
    expect(discord.user_names).toEqual({ "123456789012345678": "Bob" });
    const [p] = problemsOf("connectors:\n  telegram:\n    allowed_users: [{ id: 1, name: Alice, role: admin }]\n");
    expect(p?.path).toContain("connectors.telegram.allowed_users.0");
  });

  it("reads a path that starts with ~/ in the home directory, and ~user or a folder named ~x against the config's", () => {
    const home = process.env.HOME as string;
    const { config } = parseConfig(
      'skills:\n  dirs: [~/.claude/skills, "~", ./~x, ~bob/skills]\nstorage: { path: ~/hermes/h.db }\n',
      "/srv/hermes/hermes.yaml",
      {},
    );
    expect(config.skills.dirs).toEqual([join(home, ".claude/skills"), home, "/srv/hermes/~x", "/srv/hermes/~bob/skills"]);
    expect(config.storage.path).toBe(join(home, "hermes/h.db"));
  });

  it("checks context and storage.backup, and resolves the backup dir against the config's directory", () => {
    const { config } = parseConfig('storage:\n  backup: { schedule: "30 3 * * *", keep: 7 }\n', "/srv/hermes/hermes.yaml", {});
    expect(config.context).toEqual({ summaries: true, compact_every: 20, compact_timeout_s: 120 });
    expect(config.storage.backup).toEqual({ schedule: "30 3 * * *", keep: 7, dir: "/srv/hermes/data/backups" });
    const [bad] = problemsOf('storage:\n  backup: { schedule: "every night" }\n');
    expect(bad).toMatchObject({ path: "storage.backup.schedule" });
    expect(bad?.message).toContain("invalid cron expression");
    expect(problemsOf("context:\n  compact_every: 0\n")[0]).toMatchObject({ path: "context.compact_every" });
  });

  it("names an unknown tool and lists the known ones", () => {
    const [p] = problemsOf("tools:\n  enabled: [clock, teleport]\n");
    expect(p).toMatchObject({ line: 2, path: "tools.enabled.1" });
    expect(p?.message).toContain("clock");
  });

  it("replaces ${VAR} and ${VAR:-default} from the environment and re-reads numbers", () => {
    const text = "model:\n  base_url: ${URL:-http://127.0.0.1:9}\n  context_tokens: ${CTX:-8192}\n  api_key: ${KEY}\n";
    const { config, secrets } = parseConfig(text, "h.yaml", { KEY: "sk-secret-123", CTX: "4096" });
    expect(config.model.base_url).toBe("http://127.0.0.1:9");
    expect(config.model.context_tokens).toBe(4096);
    expect(config.model.api_key).toBe("sk-secret-123");
    expect(secrets).toContain("sk-secret-123");
  });

  it("names an unset ${VAR} without a default and its key, and takes ${VAR:-} as the explicit empty value", () => {
    const problems = problemsOf(
      "model:\n  base_url: http://127.0.0.1:9\n  api_key: ${OPENAI_KEY}\ntools:\n  enabled: [clock, '${EXTRA}']\n",
    );
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatchObject({ line: 3, col: 12, path: "model.api_key" });
    expect(problems[0]?.message).toBe("${OPENAI_KEY} is not set in the environment (write ${OPENAI_KEY:-} to allow it empty)");
    expect(problems[1]).toMatchObject({ line: 5, path: "tools.enabled.1" });
    expect(problems[1]?.message).toContain("${EXTRA} is not set");
    const { config } = parseConfig("model:\n  api_key: ${OPENAI_KEY:-}\n", "h.yaml", {});
    expect(config.model.api_key).toBe("");
    // Set but empty is set: the owner said so.
    expect(parseConfig("model:\n  api_key: ${OPENAI_KEY}\n", "h.yaml", { OPENAI_KEY: "" }).config.model.api_key).toBe("");
  });

  it("keeps a substituted value that YAML cannot read as one scalar (an alias, a list, a stray colon) as text", () => {
    const text = "model:\n  api_key: ${KEY}\n  name: ${NAME}\n";
    const { config } = parseConfig(text, "h.yaml", { KEY: "*not-an-alias", NAME: "[a, b" });
    expect(config.model.api_key).toBe("*not-an-alias");
    expect(config.model.name).toBe("[a, b");
  });

  it("keeps a substituted secret whole, also one with ' #' or surrounding quotes in it, and still re-reads numbers", () => {
    const text =
      "connectors:\n  email:\n    imap:\n      pass: ${PASS}\n    smtp:\n      pass: ${SMTP}\nmodel:\n  context_tokens: ${CTX}\n";
    const env = { PASS: "tr0ub4dor #3", SMTP: "'quoted'", CTX: "8192" };
    const { config } = parseConfig(text, "h.yaml", env);
    expect(config.connectors.email.imap.pass).toBe("tr0ub4dor #3");
    expect(config.connectors.email.smtp.pass).toBe("'quoted'");
    expect(config.model.context_tokens).toBe(8192);
  });

  it("still re-reads a substituted number with spaces or a line break around it (it became text, and 'expected number')", () => {
    const text = "model:\n  context_tokens: ${CTX}\nagent:\n  max_steps: ${STEPS}\n";
    const { config } = parseConfig(text, "h.yaml", { CTX: "8192 ", STEPS: "12\n" });
    expect(config.model.context_tokens).toBe(8192);
    expect(config.agent.max_steps).toBe(12);
  });

  it("says to quote a substituted value that is all digits where text is expected (a PIN would lose its leading 0)", () => {
    const text = "connectors:\n  email:\n    imap:\n      pass: ${PASS}\n";
    const [problem] = problemsOf(text, { PASS: "0123" });
    expect(problem).toMatchObject({ line: 4, path: "connectors.email.imap.pass" });
    expect(problem?.message).toBe('expected string, received number: write it in quotes, "${PASS}", to keep its value as text');
    const { config } = parseConfig(text.replace("${PASS}", '"${PASS}"'), "h.yaml", { PASS: "0123" });
    expect(config.connectors.email.imap.pass).toBe("0123");
  });

  it("locates a problem inside an aliased node at the anchor's text, with what is wrong there", () => {
    const fallbacks = problemsOf("model:\n  name: x\n  fallbacks:\n    - &small { name: small, context_tokens: lots }\n    - *small\n");
    expect(fallbacks[1]).toMatchObject({ line: 4, path: "model.fallbacks.1.context_tokens" });
    expect(fallbacks[1]?.message).toBe("expected number, received string");
    const jobs = [
      "connectors:",
      "  cron:",
      "    jobs:",
      "      - &brief",
      "        name: brief",
      "        schedule: '0 7 * * *'",
      "        prompt: p",
      "        delivr: cli:o",
      "      - *brief",
    ].join("\n");
    const unknown = problemsOf(jobs).filter((p) => p.message === "unknown key 'delivr'");
    expect(unknown.map((p) => [p.path, p.line])).toEqual([
      ["connectors.cron.jobs.0.delivr", 8],
      ["connectors.cron.jobs.1.delivr", 8],
    ]);
  });

  it("says how to fix a file that holds a second YAML document, at its '---'", () => {
    const [p] = problemsOf("model:\n  name: x\n---\nagent:\n  max_steps: 3\n");
    expect(p).toMatchObject({ line: 3, col: 1 });
    expect(p?.message).not.toContain("parseAllDocuments");
    expect(p?.message).toContain("one YAML document");
  });

  it("says which variable to set when an enabled connector has no token", () => {
    const [p] = problemsOf('connectors:\n  telegram: { enabled: true, token: "${TELEGRAM_BOT_TOKEN}" }\n');
    expect(p?.path).toBe("connectors.telegram.token");
    expect(p?.message).toContain("TELEGRAM_BOT_TOKEN");
  });

  it("keeps the schema's own message for a check on a key the file leaves out, located at the nearest parent it has", () => {
    const [telegram] = problemsOf("model:\n  name: x\nconnectors:\n  telegram: { enabled: true }\n");
    expect(telegram).toMatchObject({ line: 4, col: 13, path: "connectors.telegram.token" });
    expect(telegram?.message).toBe("telegram is enabled but has no token (set TELEGRAM_BOT_TOKEN in the environment)");
    const [http] = problemsOf("connectors:\n  http:\n    enabled: true\n");
    expect(http).toMatchObject({ line: 3, col: 5, path: "connectors.http.token" });
    expect(http?.message).toBe("http is enabled but has no token (set HERMES_HTTP_TOKEN in the environment)");
    // A key the schema requires is still reported as missing.
    const [prompt] = problemsOf("connectors:\n  cron:\n    jobs:\n      - { name: brief, schedule: '0 7 * * *' }\n");
    expect(prompt).toMatchObject({ line: 4, path: "connectors.cron.jobs.0.prompt" });
    expect(prompt?.message).toMatch(/^missing required key 'prompt' \(expected string\)/);
  });

  it("takes only http(s) URLs for the model, its fallbacks, speech and MCP servers", () => {
    const [bare] = problemsOf("model:\n  base_url: localhost:11434\n");
    expect(bare).toMatchObject({ line: 2, col: 13, path: "model.base_url", message: "expected an http(s) URL" });
    const others = problemsOf(
      [
        "model:",
        "  fallbacks:",
        "    - { provider: openai, base_url: 'ftp://example.com/v1', name: small }",
        "speech:",
        "  base_url: file:///tmp/speech",
        "mcp:",
        "  servers:",
        "    home: { url: 'ws://127.0.0.1:8123/mcp' }",
        "",
      ].join("\n"),
    );
    expect(others.map((p) => [p.path, p.message])).toEqual([
      ["model.fallbacks.0.base_url", "expected an http(s) URL"],
      ["speech.base_url", "expected an http(s) URL"],
      ["mcp.servers.home.url", "expected an http(s) URL"],
    ]);
    const { config } = parseConfig(
      "model:\n  base_url: HTTPS://example.com/v1\nspeech:\n  base_url: http://127.0.0.1:8000/v1\n",
      "hermes.yaml",
      {},
    );
    expect([config.model.base_url, config.speech?.base_url]).toEqual(["HTTPS://example.com/v1", "http://127.0.0.1:8000/v1"]);
  });

  it("keeps config/hermes.schema.json in step with the schema (run `npm run schema` to refresh)", () => {
    const committed = readFileSync(new URL("../../config/hermes.schema.json", import.meta.url), "utf8");
    expect(committed).toBe(renderJsonSchema());
  });
});

describe("hermes config check and hermes start on bad configs", () => {
  const cases = {
    "malformed YAML": { text: "model: [\n", where: /hermes\.yaml:\d+:\d+/ },
    "an unknown key": { text: "log:\n  level: info\n  colour: true\n", where: /hermes\.yaml:3:3: log\.colour: unknown key 'colour'/ },
    "a wrong type": { text: "model:\n  timeout_s: soon\n", where: /hermes\.yaml:2:14: model\.timeout_s: expected number/ },
    "a model URL without http://": {
      text: "model:\n  base_url: localhost:11434\n",
      where: /hermes\.yaml:2:13: model\.base_url: expected an http\(s\) URL/,
    },
    "a typo in a delivery target": {
      text: "connectors:\n  cron:\n    jobs:\n      - { name: brief, schedule: '0 7 * * *', prompt: hi, deliver: 'telegarm:42' }\n",
      where: /hermes\.yaml:4:\d+: connectors\.cron\.jobs\.0\.deliver: .*'telegarm'.*telegram, discord, cli/,
    },
  };
  for (const [name, { text, where }] of Object.entries(cases)) {
    it(`exits 1 naming file:line:col and the key path for ${name}`, async () => {
      const dir = createTempDir();
      try {
        const path = join(dir.path, "hermes.yaml");
        (await import("node:fs")).writeFileSync(path, text);
        const check = await runCli(["config", "check", "--config", path]);
        expect(check.code).toBe(1);
        expect(check.stderr).toMatch(where);
        const start = await runCli(["start", "--config", path]);
        expect(start.code).toBe(1);
        expect(start.stderr).toMatch(where);
      } finally {
        dir.cleanup();
      }
    });
  }

  it("masks a plugin's secrets in config check at any depth, and the ${VAR}s inside its other texts", async () => {
    const dir = createTempDir();
    try {
      const { writeFileSync } = await import("node:fs");
      writeFileSync(
        join(dir.path, "p.mjs"),
        "export default { api: 1, create() { return { async start() {}, async stop() {}, async send() { return { id: '1' }; } }; } };\n",
      );
      const text = [
        "connectors:",
        "  plugins:",
        "    - name: matrix",
        "      module: ./p.mjs",
        "      allowed_users: [alice]",
        "      options:",
        "        login: { user: hermes, password: hunter2-literal }",
        "        auth: { type: basic, user: hermes, password: also-secret-1 }",
        "        headers: { X-Client: 'Bearer ${MATRIX_TOKEN}' }",
        "        webhook: https://hooks.example.org/services/T000/${SLACK_HOOK}",
        "        servers: [{ name: home, api_key: nested-key-1 }]",
        "",
      ].join("\n");
      const path = join(dir.path, "hermes.yaml");
      writeFileSync(path, text);
      const env = { MATRIX_TOKEN: "syt_SECRET_TOKEN", SLACK_HOOK: "XyZsecret" };
      const check = await runCli(["config", "check", "--config", path], { env });
      expect(check.code).toBe(0);
      for (const secret of ["hunter2-literal", "also-secret-1", "syt_SECRET_TOKEN", "XyZsecret", "nested-key-1"])
        expect(check.stdout).not.toContain(secret);
      expect(check.stdout).toContain("user: hermes");
      // A map under a secret-sounding name is read key by key: its plain values are neither masked nor log secrets.
      expect(check.stdout).toContain("type: basic");
      expect(parseConfig(text, path, env).secrets).not.toContain("basic");
      expect(parseConfig(text, path, env).secrets).not.toContain("hermes");
      expect(check.stdout).toContain("X-Client: Bearer ********");
      expect(check.stdout).toContain("https://hooks.example.org/services/T000/********");
      expect(parseConfig(text, path, env).secrets).toEqual(expect.arrayContaining(["hunter2-literal", "nested-key-1"]));
    } finally {
      dir.cleanup();
    }
  });

  it("masks the mailbox's passwords in config check and scrubs them from the log, written in the file or not", async () => {
    const dir = createTempDir();
    try {
      const path = join(dir.path, "hermes.yaml");
      const email = [
        "connectors:",
        "  email:",
        "    enabled: true",
        "    address: hermes@example.org",
        "    imap: { host: imap.example.org, user: hermes@example.org, pass: hunter2-literal }",
        "    smtp: { host: smtp.example.org, user: hermes@example.org, pass: '${EMAIL_PASS}' }",
        "    allowed_senders: [owner@example.org]",
        "",
      ].join("\n");
      (await import("node:fs")).writeFileSync(path, email);
      const check = await runCli(["config", "check", "--config", path], { env: { EMAIL_PASS: "envsecret99" } });
      expect(check.code).toBe(0);
      expect(check.stdout).toMatch(/imap:[\s\S]*pass: "\*{8}"[\s\S]*smtp:[\s\S]*pass: "\*{8}"/);
      expect(check.stdout).not.toContain("hunter2-literal");
      expect(check.stdout).not.toContain("envsecret99");
      expect(check.stdout).toContain("user: hermes@example.org");
      expect(parseConfig(email, path, { EMAIL_PASS: "envsecret99" }).secrets).toEqual(
        expect.arrayContaining(["hunter2-literal", "envsecret99"]),
      );
    } finally {
      dir.cleanup();
    }
  });

  it("prints the effective config with secrets masked", async () => {
    const dir = createTempDir();
    try {
      const path = join(dir.path, "hermes.yaml");
      (await import("node:fs")).writeFileSync(
        path,
        [
          "model:",
          "  provider: openai",
          "  base_url: http://127.0.0.1:8000/v1",
          "  api_key: ${OPENAI_API_KEY}",
          "  fallbacks:",
          "    - { provider: openai, base_url: http://127.0.0.1:8001/v1, name: small, api_key: '${FALLBACK_KEY}' }",
          "",
        ].join("\n"),
      );
      const env = { OPENAI_API_KEY: "sk-very-secret", FALLBACK_KEY: "sk-fallback-secret" };
      const check = await runCli(["config", "check", "--config", path], { env });
      expect(check.code).toBe(0);
      expect(check.stdout).toContain('api_key: "********"');
      expect(check.stdout).not.toContain("sk-very-secret");
      expect(check.stdout).not.toContain("sk-fallback-secret");
    } finally {
      dir.cleanup();
    }
  });
});

describe("the hermes command", () => {
  it("prints help and exits 2 on usage errors", async () => {
    expect((await runCli(["--help"])).stdout).toContain("hermes ask TEXT".replace("hermes ", ""));
    expect((await runCli(["frobnicate"])).code).toBe(2);
    expect((await runCli(["ask"])).code).toBe(2);
  });

  it("exits 3 with a hint when the daemon is not running, from every client command", async () => {
    const dir = createTempDir();
    try {
      // No socket at all, and the socket a killed daemon left behind (nobody listens on it).
      const stale = join(dir.path, "stale.sock");
      execFileSync("python3", ["-c", "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", stale]);
      for (const socket of [join(dir.path, "none.sock"), stale]) {
        for (const args of [["ask", "hi"], ["status"], ["chat"], ["usage"]]) {
          const result = await runCli(args, { cwd: dir.path, env: { HERMES_SOCKET: socket } });
          expect(result.code, `${args.join(" ")} with ${socket}`).toBe(3);
          expect(result.stderr).toContain(socket);
          expect(result.stderr).toContain("hermes start");
        }
      }
    } finally {
      dir.cleanup();
    }
  });
});

describe("the CLI's fast socket-path lookup", () => {
  it("agrees with the YAML parser on the usual shapes, and defers to it when unsure", async () => {
    const { quickSocket } = await import("../../src/cli/socket-path.js");
    const { parseDocument } = await import("yaml");
    const cases = [
      "model: {}\n",
      "connectors:\n  cli: { enabled: true, socket: ./data/hermes.sock }\n",
      'connectors:\n  cli: { enabled: true, socket: "/run/hermes/hermes.sock" }  # comment\n',
      "connectors:\n  telegram: { enabled: false }\n  cli:\n    enabled: true\n    socket: /tmp/h.sock\n  cron: { enabled: true }\n",
      "connectors:\n  cli:\n    enabled: true\n",
      "connectors: { cli: { socket: /x.sock } }\n",
      "connectors:\n  cli: {enabled: true,socket: '/q/s.sock'}\n",
    ];
    for (const text of cases) {
      const fromYaml = (parseDocument(text).getIn(["connectors", "cli", "socket"]) as string | undefined) ?? "./data/hermes.sock";
      const quick = quickSocket(text);
      if (quick !== undefined) expect(quick, text).toBe(fromYaml);
    }
    expect(quickSocket("connectors: { cli: { socket: /x.sock } }\n")).toBeUndefined();
  });
});

/** A config that sets every section, each of the kind that can be parsed here (no file or network is looked at). */
const EVERY_SECTION = `model:
  name: llama3.1:8b
  fallbacks:
    - { provider: openai, base_url: "http://127.0.0.1:8080/v1", name: backup }
tools:
  enabled: [clock, memory, http_get]
mcp:
  servers:
    home: { command: /usr/bin/true, args: [] }
speech:
  base_url: "http://127.0.0.1:9000/v1"
skills:
  dirs: [./skills]
connectors:
  telegram: { enabled: true, token: "123:abc", allowed_users: [1] }
  discord: { enabled: true, token: "x.y.z", allowed_users: ["2"] }
  http:
    enabled: true
    token: "0123456789abcdef0123456789abcdef"
    openai: { enabled: true }
  email:
    enabled: true
    address: hermes@example.org
    imap: { host: 127.0.0.1, user: hermes, pass: pw }
    smtp: { host: 127.0.0.1, user: hermes, pass: pw }
    allowed_senders: [owner@example.org]
  plugins:
    - { name: phone, module: ./plugin.js, allowed_users: [alice], options: { a: 1 } }
  cron:
    enabled: true
    jobs:
      - { name: briefing, schedule: "0 7 * * *", prompt: "Morning briefing", deliver: "telegram:1" }
`;

describe("the config's parse at start", () => {
  // zod compiles an object schema to a function at its first parse unless told not to before that schema
  // is made; a compile at every start costs it a few milliseconds. Run in a process of its own (the built
  // modules, loaded as `hermes start` loads them), so that no other test has made a schema first.
  it("makes no code at run time (no `new Function`), for a config with every section", async () => {
    const load = join(import.meta.dirname, "../../dist/src/config/load.js");
    const config = EVERY_SECTION;
    const script = `
      let made = 0;
      globalThis.Function = new Proxy(Function, { construct: (f, args) => (made++, Reflect.construct(f, args)) });
      const { parseConfig } = await import(${JSON.stringify(load)});
      parseConfig(process.env.CONFIG, "/etc/hermes/hermes.yaml", {});
      console.log(made);`;
    const result = await runNode(["--input-type=module", "-e", script], { env: { CONFIG: config } });
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe("0");
  });
});
