// The cost of email (imapflow, nodemailer, mailparser, loaded only when connectors.email is enabled): start
// to READY and idle RSS of a daemon with email against a local Dovecot and Postfix, beside one without; and
// the three libraries' own import, which is all that can be measured where those servers cannot be started.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { MAIL_USERS, startMailServers } from "../test/fakes/mail-servers.js";
import { startFakeModel } from "../test/fakes/model-server.js";
import { baseSettings, startHermes } from "../test/helpers/hermes.js";
import { waitFor } from "../test/helpers/wait.js";
import type { Recorder } from "./figures.js";
import { cleanEnv } from "./floors.js";
import { oneStartMs } from "./start.js";
import { median, round, rssMb } from "./stats.js";

const ROOT = resolve(import.meta.dirname, "../..");
const STARTS = 7;
const RSS_RUNS = 3;

export async function emailCost(record: Recorder): Promise<void> {
  const load = await importCost();
  const servers = await startMailServers().catch((err: Error) => err);
  if (servers instanceof Error) {
    record({ name: "email: importing imapflow, nodemailer, mailparser", value: load.ms, unit: "ms", floor: `+${load.mb} MB RSS` });
    console.log(`  (email with a daemon not measured: ${servers.message.split("\n")[0]})`);
    return;
  }
  const model = await startFakeModel();
  model.respond(() => ({ text: "ok" }));
  const base = { ...baseSettings(model.url), log: { level: "info" } };
  const hermesBox = MAIL_USERS.hermes;
  const email = {
    enabled: true,
    address: hermesBox.user,
    imap: { host: "127.0.0.1", port: servers.imapPort, secure: false, ...hermesBox },
    smtp: { host: "127.0.0.1", port: servers.smtpPort, secure: false, ...hermesBox },
    allowed_senders: [MAIL_USERS.owner.user],
    trust: "none",
  };
  const withEmail = { ...base, connectors: { cron: { enabled: false }, email } };
  try {
    const ready = { without: [] as number[], with: [] as number[] };
    for (let i = 0; i < STARTS; i++) {
      ready.without.push(await oneStartMs(base));
      ready.with.push(await oneStartMs(withEmail));
    }
    // RSS moves by a few MB between two starts of the same daemon: the median of three of each.
    const idle: number[] = [];
    const mailIdle: number[] = [];
    const mailAfter: number[] = [];
    const { sendToHermes } = await import("../test/helpers/mail-client.js");
    for (let i = 0; i < RSS_RUNS; i++) {
      idle.push((await idleRss(base)).after);
      const before = model.requests.length;
      const run = await idleRss(withEmail, async (pid) => {
        const idleMb = rssMb(pid);
        await sendToHermes(servers, { from: MAIL_USERS.owner.user, subject: `bench ${i}`, text: "hello" });
        await waitFor(() => model.requests.length > before, { message: "the mail reaching the model" });
        return idleMb;
      });
      mailIdle.push(run.before);
      mailAfter.push(run.after);
    }
    const [without, waiting, answered] = [median(idle), median(mailIdle), median(mailAfter)];
    const withoutMs = median(ready.without);
    record({
      name: "email: start to READY growth",
      value: round(median(ready.with) - withoutMs, 0),
      unit: "ms",
      floor: `${round(median(ready.with), 0)} ms; without email ${round(withoutMs, 0)} ms`,
    });
    record({
      name: "  … idle RSS growth, waiting in IDLE",
      value: round(waiting - without, 1),
      unit: "MB",
      // The budget of the other optional doors (MCP, speech and HTTP together).
      target: { op: "<=", value: 12 },
      floor: `${waiting} MB; without email ${without} MB`,
    });
    record({
      name: "  … idle RSS growth after one mail answered",
      value: round(answered - without, 1),
      unit: "MB",
      note: "mailparser and nodemailer are loaded at the first mail",
      floor: `${answered} MB`,
    });
    record({ name: "  … importing the three packages alone", value: load.ms, unit: "ms", floor: `+${load.mb} MB RSS over bare node` });
  } finally {
    await model.close();
    await servers.stop();
  }
}

/** RSS 5 s after start (`before`, from `between` when given) and 5 s after `between` has run (`after`). */
async function idleRss(settings: Record<string, unknown>, between?: (pid: number) => Promise<number>) {
  const hermes = await startHermes(settings, { env: cleanEnv });
  const pid = hermes.process.pid as number;
  const settle = () => new Promise((r) => setTimeout(r, 5000));
  await settle();
  const before = between ? await between(pid) : rssMb(pid);
  if (between) await settle();
  const after = rssMb(pid);
  await hermes.stop();
  return { before, after };
}

/** A child that requires the three packages (the daemon loads them from its bundle instead): time and RSS over bare node. */
async function importCost(n = 5): Promise<{ ms: number; mb: number }> {
  const code = `const m0 = process.memoryUsage.rss(); const t = performance.now();
require("imapflow"); require("nodemailer"); require("mailparser");
console.log(JSON.stringify({ ms: performance.now() - t, mb: (process.memoryUsage.rss() - m0) / 1048576 }));`;
  const runs: { ms: number; mb: number }[] = [];
  for (let i = 0; i < n; i++) {
    const out = await new Promise<string>((done) => {
      const child = spawn(process.execPath, ["-e", code], {
        cwd: ROOT,
        env: { ...process.env, ...cleanEnv },
        stdio: ["ignore", "pipe", "inherit"],
      });
      let text = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        text += d;
      });
      child.on("close", () => done(text));
    });
    runs.push(JSON.parse(out) as { ms: number; mb: number });
  }
  return { ms: round(median(runs.map((r) => r.ms)), 0), mb: round(median(runs.map((r) => r.mb)), 1) };
}
