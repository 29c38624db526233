import { existsSync } from "node:fs";
import { type Document, isSeq } from "yaml";
import { substituteEnvRefs } from "../config/env.js";
import { canonicalZone } from "../config/zones.js";
import { addAllowedUser } from "./allowed-users.js";
import { UsageError } from "./options.js";
import { createPrompts, type Prompts } from "./prompts.js";
import { type Checked, discordBot, listModels, listOpenAiModels, telegramBot } from "./setup-checks.js";
import { readConfigDoc, readEnvFile, writeConfigDoc, writeEnvFile } from "./setup-files.js";
import { pairByPolling } from "./setup-pair.js";
import { envFileOf } from "./socket-path.js";

/** What can be given on the command line instead of typed (all of it for scripts: --non-interactive). */
export interface SetupFlags {
  modelUrl?: string;
  model?: string;
  telegramToken?: string;
  discordToken?: string;
  timezone?: string;
  /** HH:MM, or "off". */
  briefing?: string;
  location?: string;
  nonInteractive?: boolean;
  pair?: boolean;
}

export const SECTIONS = ["model", "telegram", "discord", "timezone", "briefing"] as const;
type Section = (typeof SECTIONS)[number];

const TELEGRAM_ROOT = "https://api.telegram.org";
const DISCORD_ROOT = "https://discord.com/api";

/**
 * `hermes setup [SECTION…]`: asks for what hermes needs and checks each answer live, then writes the
 * config and the 0600 environment file beside it. A re-run shows the current values as the defaults
 * (Enter keeps them) and touches only the sections named, or given as flags; nothing else in the file.
 */
export async function setup(configPath: string, sections: string[], flags: SetupFlags): Promise<number> {
  const unknown = sections.filter((s) => !(SECTIONS as readonly string[]).includes(s));
  if (unknown.length) throw new UsageError(`unknown section ${unknown.join(", ")}; sections: ${SECTIONS.join(", ")}`);
  const fresh = !existsSync(configPath);
  const doc = readConfigDoc(configPath);
  const envPath = envFileOf(configPath);
  const env = readEnvFile(envPath);
  const secrets: Record<string, string> = {};
  const io = flags.nonInteractive ? undefined : createPrompts(process.stdin, process.stdout);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  // Named sections, or in a script the ones given as flags; else every one (Enter keeps what is there).
  const chosen = (s: Section) => (sections.length ? sections.includes(s) : !flags.nonInteractive || flagFor(s, flags) !== undefined);
  let written: string | undefined;
  try {
    say(`hermes setup: ${configPath}${fresh ? " (new)" : ""}`);
    if (chosen("model")) await modelSection(doc, io, flags, say, env);
    if (chosen("telegram")) await tokenSection(doc, io, say, env, secrets, telegramToken(flags));
    if (chosen("discord")) await tokenSection(doc, io, say, env, secrets, discordToken(flags));
    if (chosen("timezone")) await timezoneSection(doc, io, flags, say);
    writeConfigDoc(configPath, doc);
    const envMode = Object.keys(secrets).length ? writeEnvFile(envPath, secrets) : undefined;
    say(`✓ wrote ${configPath}${envMode === undefined ? "" : ` and ${envPath} (${envMode.toString(8).padStart(4, "0")})`}`);
    written = configPath;
    const owner = await pairOwner(configPath, doc, io, flags, say, { ...env, ...secrets });
    if (chosen("briefing")) {
      // Offered when asked for by name, or while the config has no jobs at all (a list without one: turned off).
      const offer = sections.includes("briefing") || !doc.hasIn(["connectors", "cron", "jobs"]);
      await briefingSection(doc, io, flags, say, owner, offer);
      writeConfigDoc(configPath, doc);
    }
    say(nextSteps(configPath, doc));
    return 0;
  } catch (err) {
    throw err instanceof InputEnded ? inputEnded(err, process.stdin.isTTY === true, written) : err;
  } finally {
    io?.close();
  }
}

function flagFor(s: Section, f: SetupFlags): string | undefined {
  return { model: f.model ?? f.modelUrl, telegram: f.telegramToken, discord: f.discordToken, timezone: f.timezone, briefing: f.briefing }[
    s
  ];
}

/** One answer: the flag, else the typed line, else the default. */
async function ask(io: Prompts | undefined, question: string, fallback: string, flag?: string): Promise<string> {
  if (flag !== undefined) return flag;
  if (!io) return fallback;
  const typed = await io.question(`${question}${fallback ? ` [${fallback}]` : ""}: `);
  if (typed === undefined) throw new InputEnded(question);
  return typed.trim() || fallback;
}

/** The input ended (Ctrl-D on a terminal, the end of what a script piped in) before an answer to `question`. */
class InputEnded extends Error {
  constructor(readonly question: string) {
    super(`the input ended before an answer to "${question}"`);
  }
}

/** What setup says when its input ended: on a terminal the owner pressed Ctrl-D; a script forgot its flags. */
function inputEnded(err: InputEnded, terminal: boolean, written: string | undefined): Error {
  if (!terminal) {
    return new Error(`${err.message}: run hermes setup on a terminal, or with --non-interactive and its flags (hermes --help)`);
  }
  const kept = written ? `${written} keeps the answers given before it` : "nothing was written";
  return new Error(`setup stopped at "${err.question}" (the input ended): ${kept}; run hermes setup again to go on`);
}

type Say = (line: string) => void;

async function modelSection(doc: Document, io: Prompts | undefined, f: SetupFlags, say: Say, env: Record<string, string>): Promise<void> {
  // An OpenAI-compatible server (llama.cpp, LM Studio, vLLM, …) lists its models at /models, with the config's key.
  const openai = doc.getIn(["model", "provider"]) === "openai";
  const fromEnv = (text: string) => substituteEnvRefs(text, { ...process.env, ...env });
  for (;;) {
    const url = openai
      ? await ask(io, "OpenAI-compatible base URL (ending in /v1)", String(doc.getIn(["model", "base_url"]) ?? ""), f.modelUrl)
      : await ask(io, "Ollama URL", String(doc.getIn(["model", "base_url"]) ?? "http://127.0.0.1:11434"), f.modelUrl);
    const listed = openai
      ? await listOpenAiModels(fromEnv(url), fromEnv(String(doc.getIn(["model", "api_key"]) ?? "")))
      : await listModels(fromEnv(url));
    if (!listed.ok) {
      say(`✗ ${listed.problem}`);
      if (!io || f.modelUrl) throw new Error(listed.problem);
      continue;
    }
    doc.setIn(["model", "base_url"], url);
    const models = listed.value;
    if (models.length === 0) {
      if (openai) say("✗ the server lists no models: load one in it, then run `hermes setup model` again");
      else say("✗ Ollama has no models yet. Pull one that can call tools, then run `hermes setup model` again:\n    ollama pull qwen3:8b");
      return;
    }
    say(openai ? "Models on this server:" : "Models on this server (tools = can call tools, vision = can see photos):");
    for (const [i, m] of models.entries()) say(`  ${i + 1}. ${m.name}${m.tools ? "  tools" : ""}${m.vision ? "  vision" : ""}`);
    if (!openai && !models.some((m) => m.tools))
      say("  None can call tools: hermes needs that for reminders, notes and the rest. Try: ollama pull qwen3:8b");
    const current = String(doc.getIn(["model", "name"]) ?? "");
    const fallback =
      models.find((m) => m.name === current)?.name ?? models.find((m) => m.tools)?.name ?? (models[0] as { name: string }).name;
    const pick = await ask(io, "Model (number or name)", fallback, f.model);
    const model = models[Number(pick) - 1]?.name ?? pick;
    if (!models.some((m) => m.name === model)) {
      say(openai ? `✗ ${model} is not on this server` : `✗ ${model} is not on this server; pull it with: ollama pull ${model}`);
      if (!io) throw new Error(`model ${model} is not pulled`);
      continue;
    }
    doc.setIn(["model", "name"], model);
    say(`✓ model ${model}`);
    return;
  }
}

/** A chat's bot token: asked, checked live with `check` (which words the bot on success), kept in hermes.env. */
interface ChatToken {
  connector: "telegram" | "discord";
  title: string;
  envName: "TELEGRAM_BOT_TOKEN" | "DISCORD_BOT_TOKEN";
  question: string;
  flag: string | undefined;
  root: string;
  check: (apiRoot: string, token: string) => Promise<Checked<string>>;
}

async function tokenSection(
  doc: Document,
  io: Prompts | undefined,
  say: Say,
  env: Record<string, string>,
  secrets: Record<string, string>,
  t: ChatToken,
): Promise<void> {
  const at = (key: string) => ["connectors", t.connector, key];
  const apiRoot = String(doc.getIn(at("api_root")) ?? t.root);
  // A token written into the config itself (not a ${VAR}) is taken as the current one: kept, it moves to hermes.env.
  const inFile = String(doc.getIn(at("token")) ?? "");
  const known = env[t.envName] || (inFile.includes("${") ? "" : inFile);
  for (;;) {
    const typed = await ask(io, `${t.question} (${known ? "Enter keeps the current one" : `empty: no ${t.title}`})`, "", t.flag);
    const token = typed || known;
    if (!token) return say(`- ${t.title} skipped`);
    // Enter keeps what is there: a chat turned off stays off (a token typed turns it on).
    if (!typed && doc.getIn(at("enabled")) === false) return say(`- ${t.title} stays off`);
    const checked = await t.check(apiRoot, token);
    if (!checked.ok) {
      say(`✗ ${checked.problem}`);
      if (!io || t.flag) throw new Error(checked.problem);
      continue;
    }
    say(checked.value);
    secrets[t.envName] = token;
    doc.setIn(at("enabled"), true);
    doc.setIn(at("token"), `\${${t.envName}}`);
    if (!doc.hasIn(at("allowed_users"))) doc.setIn(at("allowed_users"), doc.createNode([], { flow: true }));
    return;
  }
}

/** A bot token's live check, saying what it found in `shown`'s words. */
const checkedBy =
  <B>(probe: (root: string, token: string) => Promise<Checked<B>>, shown: (bot: B) => string): ChatToken["check"] =>
  async (root, token) => {
    const bot = await probe(root, token);
    return bot.ok ? { ok: true, value: shown(bot.value) } : bot;
  };

const telegramToken = (f: SetupFlags): ChatToken => ({
  connector: "telegram",
  title: "Telegram",
  envName: "TELEGRAM_BOT_TOKEN",
  question: "Telegram bot token from @BotFather",
  flag: f.telegramToken,
  root: TELEGRAM_ROOT,
  check: checkedBy(telegramBot, (bot) => `✓ Telegram bot @${bot.username} (${bot.name})`),
});

const discordToken = (f: SetupFlags): ChatToken => ({
  connector: "discord",
  title: "Discord",
  envName: "DISCORD_BOT_TOKEN",
  question: "Discord bot token",
  flag: f.discordToken,
  root: DISCORD_ROOT,
  check: checkedBy(discordBot, (bot) => `✓ Discord bot ${bot.username}; pair with \`hermes pair discord\` once hermes runs`),
});

async function timezoneSection(doc: Document, io: Prompts | undefined, f: SetupFlags, say: Say): Promise<void> {
  for (;;) {
    const zone = await ask(io, "Time zone", String(doc.get("timezone") ?? Intl.DateTimeFormat().resolvedOptions().timeZone), f.timezone);
    const canonical = canonicalZone(zone);
    if (canonical) {
      doc.set("timezone", canonical);
      return say(`✓ time zone ${canonical}`);
    }
    say(`✗ ${zone} is not a time zone (say Europe/Berlin or America/New_York)`);
    if (!io || f.timezone) throw new Error(`${zone} is not a time zone`);
  }
}

/** The owner's Telegram id, paired now when the daemon is not running (it would hold the bot's updates). */
async function pairOwner(configPath: string, doc: Document, io: Prompts | undefined, f: SetupFlags, say: Say, env: Record<string, string>) {
  const users = doc.getIn(["connectors", "telegram", "allowed_users"]) as { toJSON(): unknown[] } | undefined;
  const first = users?.toJSON?.()[0];
  const known = typeof first === "object" && first !== null ? (first as { id: unknown }).id : first;
  if (known !== undefined) return String(known);
  const token = env.TELEGRAM_BOT_TOKEN;
  if (!token || doc.getIn(["connectors", "telegram", "enabled"]) !== true) return undefined;
  const go = f.pair ?? (io ? !/^n/i.test(await ask(io, "Pair your Telegram account now? (Y/n)", "Y")) : false);
  if (!go) return undefined;
  const apiRoot = String(doc.getIn(["connectors", "telegram", "api_root"]) ?? TELEGRAM_ROOT);
  const paired = await pairByPolling(apiRoot, token, say);
  if (!paired) return undefined;
  const { readFileSync, writeFileSync } = await import("node:fs");
  writeFileSync(configPath, addAllowedUser(readFileSync(configPath, "utf8"), "telegram", paired.id, paired.name));
  doc.setIn(["connectors", "telegram", "allowed_users"], readConfigDoc(configPath).getIn(["connectors", "telegram", "allowed_users"]));
  writeEnvFile(envFileOf(configPath), { TELEGRAM_OWNER_ID: paired.id }); // for examples/morning-briefing.yaml
  say(`✓ paired Telegram user ${paired.id} (${paired.name})`);
  return paired.id;
}

/**
 * The morning briefing job. An existing one keeps everything but what is answered: Enter keeps it as it
 * is (its prompt, tools, days and target may be the owner's own), a new HH:MM changes only the minute and
 * the hour of its schedule, "off" removes it. A new one is offered at 07:00 when the section is asked for
 * by name or the config has no jobs yet; a re-run of every section leaves a briefing turned off, off.
 */
async function briefingSection(doc: Document, io: Prompts | undefined, f: SetupFlags, say: Say, owner: string | undefined, offer: boolean) {
  const jobsPath = ["connectors", "cron", "jobs"];
  const jobs = doc.getIn(jobsPath, true);
  const list = isSeq(jobs) ? (jobs.toJSON() as { name?: unknown; schedule?: unknown }[]) : [];
  const index = list.findIndex((j) => j?.name === "morning-briefing");
  const schedule = index >= 0 ? String(list[index]?.schedule ?? "") : undefined;
  // "M H dom mon dow" with one minute and one hour: offered as HH:MM; anything else as it is.
  const simple = schedule?.match(/^(\d{1,2}) (\d{1,2})( \S+ \S+ \S+)$/);
  const currentTime = simple ? `${simple[2]?.padStart(2, "0")}:${simple[1]?.padStart(2, "0")}` : schedule;
  const time = await askBriefingTime(io, f, say, currentTime ?? (offer ? "07:00" : "off"), currentTime);
  if (/^off$/i.test(time)) {
    if (index >= 0) doc.deleteIn([...jobsPath, index]);
    return say("- no morning briefing");
  }
  if (index >= 0 && time === currentTime) return say(`- morning briefing kept (${schedule})`);
  const hm = time.match(/^(\d{1,2}):(\d{2})$/);
  if (!hm || Number(hm[1]) > 23 || Number(hm[2]) > 59) throw new Error(`${time} is not a time of day (HH:MM)`);
  const at = `${Number(hm[2])} ${Number(hm[1])}`;
  if (index >= 0) {
    // Its days stay: of five fields, only the minute and the hour change; another shape is the owner's to edit.
    const fields = schedule?.trim().split(/\s+/) ?? [];
    if (fields.length !== 5)
      throw new Error(`the morning-briefing job's schedule "${schedule}" is not five cron fields: change it in the file`);
    doc.setIn([...jobsPath, index, "schedule"], [at, ...fields.slice(2)].join(" "));
    return say(`✓ morning briefing at ${time} (its days, prompt, tools and target kept)`);
  }
  if (!owner) return say("- the briefing needs a chat to go to: pair first (hermes pair telegram), then run `hermes setup briefing`");
  const location = await ask(io, "Weather for (a place name)", String(doc.getIn(["tools", "weather", "location"]) ?? ""), f.location);
  if (location) doc.setIn(["tools", "weather", "location"], location);
  const job = {
    name: "morning-briefing",
    schedule: `${at} * * *`,
    prompt:
      "Good morning briefing: today's date, the weather today, and my notes and reminders for today. Short, friendly, in bullet points.",
    tools: ["clock", "weather", "notes"],
    deliver: `telegram:${owner}`,
  };
  doc.setIn(["connectors", "cron", "enabled"], true);
  if (isSeq(jobs)) doc.addIn(jobsPath, doc.createNode(job));
  else doc.setIn(jobsPath, doc.createNode([job]));
  say(`✓ morning briefing at ${time} to telegram:${owner} (calendar and feeds: examples/morning-briefing.yaml)`);
}

/** HH:MM, off, or the current schedule kept as it is; anything else is asked again on a terminal (a flag's fails). */
async function askBriefingTime(io: Prompts | undefined, f: SetupFlags, say: Say, fallback: string, current: string | undefined) {
  for (;;) {
    const time = await ask(io, "A morning briefing at (HH:MM, or off)", fallback, f.briefing);
    const hm = time.match(/^(\d{1,2}):(\d{2})$/);
    if (time === current || /^off$/i.test(time) || (hm && Number(hm[1]) <= 23 && Number(hm[2]) <= 59)) return time;
    say(`✗ ${time} is not a time of day (say 07:00, or off)`);
    if (!io || f.briefing) throw new Error(`${time} is not a time of day (HH:MM)`);
  }
}

function nextSteps(configPath: string, doc: Document): string {
  const telegram = doc.getIn(["connectors", "telegram", "enabled"]) === true;
  // The secrets file, when this run or an earlier one wrote it: none without a token.
  const envFile = envFileOf(configPath);
  return [
    "",
    "Next:",
    "  hermes doctor                 check everything",
    "  hermes start                  run it in the foreground (Ctrl-C stops it), then write to your bot",
    ...(telegram ? ["  hermes pair telegram          add someone else (--name), while hermes runs"] : []),
    "  sudo deploy/install.sh        run it as a service (systemd), from the checkout: then move",
    `                                ${configPath}${existsSync(envFile) ? ` and ${envFile}` : ""} over as docs/deployment.md says`,
  ].join("\n");
}
