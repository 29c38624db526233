import { execFile } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { loadConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { ConfigError } from "../errors.js";
import { createModelClient } from "../model/create.js";
import { maskUrlsInText } from "../url-secrets.js";
import { Client, DaemonForbidden } from "./client.js";
import type { Check, Outcome } from "./doctor-check.js";

const MARK: Record<Outcome, string> = { ok: "✓", fail: "✗", warn: "!", skip: "-" };

/** `hermes doctor`: one line per check, each problem with its fix; exit 1 when any check fails. */
export async function doctor(configPath: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const checks: Check[] = [];
  const report = (c: Check) => {
    checks.push(c);
    // Details name endpoints by their URLs: a password or a key in one is not printed.
    const [detail, fix] = [maskUrlsInText(c.detail), c.fix && maskUrlsInText(c.fix)];
    process.stdout.write(`${MARK[c.outcome]} ${c.name.padEnd(9)} ${detail}${fix ? `\n            fix: ${fix}` : ""}\n`);
  };
  let config: Config;
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig(configPath);
    config = loaded.config;
    report({ name: "config", outcome: "ok", detail: `${configPath} is valid` });
  } catch (err) {
    const detail = err instanceof ConfigError ? err.message : String(err);
    report({
      name: "config",
      outcome: "fail",
      detail,
      fix: configFix(configPath),
    });
    return 1;
  }
  report(checkStorage(config.storage.path));
  report(await checkSocket(config.connectors.cli.socket));
  for (const c of await checkModel(config)) report(c);
  const { checkFallbacks, checkWindows } = await import("./doctor-model.js");
  for (const c of await checkFallbacks(config)) report(c);
  for (const c of await checkWindows(config)) report(c);
  for (const c of await checkMedia(config)) report(c);
  for (const c of await checkTokens(config)) report(c);
  if (config.connectors.email.enabled) for (const c of (await import("./doctor-email.js")).checkEmail(config)) report(c);
  if (config.connectors.plugins.length) for (const c of await (await import("./doctor-plugins.js")).checkPlugins(loaded)) report(c);
  for (const c of await (await import("./doctor-mcp.js")).checkMcpServers(config, loaded.secrets)) report(c);
  for (const c of await checkSystemd(config, env.HERMES_SYSTEMD_DIR ?? "/etc/systemd/system")) report(c);
  return checks.some((c) => c.outcome === "fail") ? 1 : 0;
}

function checkStorage(path: string): Check {
  const dir = dirname(path);
  if (!existsSync(path)) {
    if (writable(dir) || !existsSync(dir)) return { name: "storage", outcome: "ok", detail: `${path} will be created on start` };
    return (
      anotherUsers("storage", dir) ?? {
        name: "storage",
        outcome: "fail",
        detail: `${dir} is not writable`,
        fix: `give the daemon's user write access to ${dir}`,
      }
    );
  }
  if (!writable(path) || !writable(dir)) {
    return {
      name: "storage",
      outcome: "fail",
      detail: `${path} is not writable`,
      fix: `chown the database and its folder to the daemon's user`,
    };
  }
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    const result = db.pragma("quick_check", { simple: true });
    db.close();
    if (result !== "ok")
      return { name: "storage", outcome: "fail", detail: `${path}: ${result}`, fix: "restore the database from a backup" };
  } catch (err) {
    return { name: "storage", outcome: "fail", detail: `${path}: ${(err as Error).message}`, fix: "check the file is a hermes database" };
  }
  return { name: "storage", outcome: "ok", detail: `${path} is writable and sound` };
}

async function checkSocket(path: string): Promise<Check> {
  if (Buffer.byteLength(path) > 107) {
    return {
      name: "socket",
      outcome: "fail",
      detail: `${path} is too long for a Unix socket`,
      fix: "use a shorter connectors.cli.socket path",
    };
  }
  if (existsSync(path)) {
    try {
      const client = await Client.connect(path);
      const status = await client.call({ op: "status" });
      client.close();
      const pid = status.type === "result" ? (status.data as { pid?: number }).pid : undefined;
      return { name: "socket", outcome: "ok", detail: `the daemon answers on ${path} (pid ${pid})` };
    } catch (err) {
      if (err instanceof DaemonForbidden)
        return {
          name: "socket",
          outcome: "warn",
          detail: `${path} exists, but this user may not open it (${err.code})`,
          fix: "run `hermes doctor` as the service's user (`sudo -u hermes hermes doctor`) or with sudo",
        };
      return {
        name: "socket",
        outcome: "warn",
        detail: `${path} exists but nobody answers (a stale socket)`,
        fix: "start hermes; it replaces the stale socket",
      };
    }
  }
  const dir = dirname(path);
  if (existsSync(dir) && !writable(dir))
    return (
      anotherUsers("socket", dir) ?? {
        name: "socket",
        outcome: "fail",
        detail: `${dir} is not writable`,
        fix: `let the daemon's user write to ${dir}`,
      }
    );
  return {
    name: "socket",
    outcome: "warn",
    detail: `the daemon is not running (no socket at ${path})`,
    fix: "start it: `systemctl start hermes` or `hermes start`",
  };
}

async function checkModel(config: Config): Promise<Check[]> {
  const m = config.model;
  const probe = await (await createModelClient(m)).probe(AbortSignal.timeout(5000));
  if (!probe.reachable) {
    const fix =
      probe.fix ??
      (m.provider === "ollama"
        ? "start Ollama (`systemctl start ollama` or `ollama serve`), or fix model.base_url"
        : "start the model server, or fix model.base_url");
    return [{ name: "model", outcome: "fail", detail: probe.detail, fix }];
  }
  if (probe.modelPresent === false) {
    const fix = m.provider === "ollama" ? `ollama pull ${m.name}` : "set model.name to a model the server offers";
    return [{ name: "model", outcome: "fail", detail: probe.detail, fix }];
  }
  return [{ name: "model", outcome: "ok", detail: `${m.provider} at ${m.base_url}: ${probe.detail}` }];
}

/** The speech endpoint, and whether the model that would see a photo can (a model without vision is a warning). */
async function checkMedia(config: Config): Promise<Check[]> {
  const { checkSpeech, checkVision } = await import("../media/checks.js");
  const visionModel = config.model.vision_model ? await createModelClient({ ...config.model, name: config.model.vision_model }) : undefined;
  const [speech, vision] = await Promise.all([
    checkSpeech(config),
    checkVision(config, await createModelClient(config.model), visionModel),
  ]);
  return [
    { name: "speech", outcome: speech.ok === null ? "skip" : speech.ok ? "ok" : "fail", detail: speech.detail, fix: speech.fix },
    { name: "vision", outcome: vision.ok === null ? "skip" : vision.ok ? "ok" : "warn", detail: vision.detail, fix: vision.fix },
  ];
}

async function checkTokens(config: Config): Promise<Check[]> {
  const out: Check[] = [];
  const { telegram, discord } = config.connectors;
  if (telegram.enabled) {
    const plausible = /^\d+:[\w-]{30,}$/.test(telegram.token);
    out.push(
      plausible
        ? await checkTelegramToken(telegram)
        : {
            name: "telegram",
            outcome: "fail",
            detail: "the token does not look like a bot token (123456:ABC…)",
            fix: "set TELEGRAM_BOT_TOKEN to the token @BotFather gave you",
          },
    );
    if (telegram.allowed_users.length === 0)
      out.push({
        name: "telegram",
        outcome: "warn",
        detail: "allowed_users is empty: nobody can use the bot",
        fix: "add your numeric Telegram id to connectors.telegram.allowed_users",
      });
  }
  if (discord.enabled) {
    out.push(await checkDiscordToken(discord));
    if (discord.allowed_users.length === 0)
      out.push({
        name: "discord",
        outcome: "warn",
        detail: "allowed_users is empty: nobody can use the bot",
        fix: "run `hermes pair discord` while hermes runs, or add your Discord user id to connectors.discord.allowed_users",
      });
  }
  if (config.connectors.http.enabled) out.push(checkHttpToken(config.connectors.http));
  return out;
}

/** Telegram's own word on the token (getMe); a Telegram that cannot be reached is a warning, not a verdict. */
async function checkTelegramToken(telegram: Config["connectors"]["telegram"]): Promise<Check> {
  const { telegramBot } = await import("./setup-checks.js");
  const users = `${telegram.allowed_users.length} allowed user(s)`;
  const bot = await telegramBot(telegram.api_root, telegram.token);
  if (bot.ok) return { name: "telegram", outcome: "ok", detail: `token accepted by Telegram: @${bot.value.username}; ${users}` };
  if (bot.problem.startsWith("Telegram rejected"))
    return { name: "telegram", outcome: "fail", detail: bot.problem, fix: "set TELEGRAM_BOT_TOKEN to the token @BotFather gave you" };
  return { name: "telegram", outcome: "warn", detail: `token set (${users}), but Telegram could not be asked about it: ${bot.problem}` };
}

/** Discord's own word on the token (`GET /users/@me`): a revoked or reset token fails; a Discord out of reach only warns. */
async function checkDiscordToken(discord: Config["connectors"]["discord"]): Promise<Check> {
  const { discordBot } = await import("./setup-checks.js");
  const users = `${discord.allowed_users.length} allowed user(s)`;
  const fix = "set DISCORD_BOT_TOKEN to the token on the Developer Portal's Bot page";
  const bot = await discordBot(discord.api_root, discord.token);
  if (bot.ok) return { name: "discord", outcome: "ok", detail: `token accepted by Discord: ${bot.value.username}; ${users}` };
  if (bot.problem.startsWith("Discord rejected") || bot.problem.startsWith("that does not look"))
    return { name: "discord", outcome: "fail", detail: bot.problem, fix };
  return { name: "discord", outcome: "warn", detail: `token set (${users}), but Discord could not be asked about it: ${bot.problem}` };
}

function checkHttpToken(http: Config["connectors"]["http"]): Check {
  if (http.token.length < 16) {
    const detail = "the token is short: whoever guesses it can ask and approve";
    return { name: "http", outcome: "warn", detail, fix: "set HERMES_HTTP_TOKEN to a long random value (openssl rand -hex 32)" };
  }
  const host = http.listen.slice(0, http.listen.lastIndexOf(":")).replace(/^\[|\]$/g, "");
  if (host === "localhost" || host === "::1" || host.startsWith("127."))
    return { name: "http", outcome: "ok", detail: `token set; listening on ${http.listen}` };
  return {
    name: "http",
    outcome: "warn",
    detail: `listens on ${http.listen}, beyond this machine, in plain HTTP`,
    fix: "keep connectors.http.listen on 127.0.0.1 and put a reverse proxy with TLS in front (see docs/http.md)",
  };
}

async function checkSystemd(config: Config, unitDir: string): Promise<Check[]> {
  const out: Check[] = [];
  const onSystemd = existsSync("/run/systemd/system");
  const unitPath = `${unitDir}/hermes.service`;
  if (!existsSync(unitPath)) {
    out.push({
      name: "service",
      outcome: onSystemd ? "warn" : "skip",
      detail: `no ${unitPath}`,
      fix: onSystemd ? "install the service: sudo deploy/install.sh" : undefined,
    });
  } else if (onSystemd) {
    const enabled = await run("systemctl", ["is-enabled", "hermes.service"]);
    out.push(
      enabled === "enabled"
        ? { name: "service", outcome: "ok", detail: "hermes.service is installed and enabled" }
        : {
            name: "service",
            outcome: "warn",
            detail: `hermes.service is ${enabled || "not enabled"}`,
            fix: "systemctl enable --now hermes",
          },
    );
  } else {
    out.push({ name: "service", outcome: "ok", detail: `${unitPath} is installed` });
  }
  if (config.model.provider === "ollama" && /\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(config.model.base_url))
    out.push(checkOllamaDropIn(config, unitDir));
  return out;
}

function checkOllamaDropIn(config: Config, unitDir: string): Check {
  const path = `${unitDir}/ollama.service.d/hermes.conf`;
  if (!existsSync(path))
    return {
      name: "ollama",
      outcome: "warn",
      detail: `no drop-in at ${path}`,
      fix: "sudo deploy/install.sh installs it (loopback only, model kept loaded, context length)",
    };
  const length = Number(readFileSync(path, "utf8").match(/OLLAMA_CONTEXT_LENGTH=(\d+)/)?.[1]);
  if (length !== config.model.context_tokens) {
    return {
      name: "ollama",
      outcome: "fail",
      detail: `the drop-in sets OLLAMA_CONTEXT_LENGTH=${length || "nothing"} but model.context_tokens is ${config.model.context_tokens}`,
      fix: `set OLLAMA_CONTEXT_LENGTH=${config.model.context_tokens} in ${path}, then systemctl daemon-reload && systemctl restart ollama`,
    };
  }
  return { name: "ollama", outcome: "ok", detail: `drop-in present; context length ${length} matches` };
}

/**
 * A folder this user may not write to because it is another user's (the service's StateDirectory or
 * RuntimeDirectory, 0700): not a fault of the setup, only of who runs doctor; undefined for one of this user's.
 */
function anotherUsers(name: string, dir: string): Check | undefined {
  const owner = statSync(dir, { throwIfNoEntry: false })?.uid;
  if (owner === undefined || owner === process.getuid?.()) return undefined;
  return {
    name,
    outcome: "warn",
    detail: `${dir} belongs to another user (uid ${owner}), so this user cannot look into it`,
    fix: "run `hermes doctor` as the service's user (`sudo -u hermes hermes doctor`) or with sudo",
  };
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return statSync(path) !== undefined;
  } catch {
    return false;
  }
}

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve) => execFile(cmd, args, (_err, stdout) => resolve(String(stdout).trim())));
}

/**
 * What to do about a config that did not load. One this user may not read (the service's, in a folder for
 * root and the hermes group) is not to be written again with `hermes setup`: a second config in ~/.config
 * would then be the one every command of this user reads.
 */
function configFix(configPath: string): string {
  try {
    accessSync(configPath, constants.R_OK);
    return "correct the lines named above; `hermes config check` shows the effective config";
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT")
      return "write a config with `hermes setup`, or pass --config PATH to the one you have";
    return "run it as the service's user (sudo -u hermes hermes doctor) or with sudo: this user may not read the config";
  }
}
