import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeEach, describe, expect, it, onTestFinished } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useHermes, useModel, useTempDir } from "../helpers/fixture.js";
import { baseSettings, CLI, DAEMON_NODE_FLAGS, runCli, writeConfig } from "../helpers/hermes.js";

const NOBODY = 65534;

/**
 * Loaded into a daemon with --import: the first write of its database claim (`<db>.pid…`) waits, after every
 * check the claim makes, until the test writes a byte to the daemon's stdin. So a second start can run in
 * between, as it may when two `hermes start` are typed (or started by two service managers) at once.
 */
const HOLD_CLAIM = `
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
const write = fs.writeFileSync;
let held = false;
fs.writeFileSync = (path, ...rest) => {
  if (!held && typeof path === "string" && path.includes(".db.pid")) {
    held = true;
    fs.writeSync(2, "claim held\\n");
    fs.readSync(0, Buffer.alloc(1));
  }
  return write(path, ...rest);
};
syncBuiltinESMExports();
`;

describe("a second hermes start", () => {
  let model: FakeModel;
  beforeEach(async () => {
    model = await useModel();
  });

  it("with the same config is refused, naming the running daemon's pid, and the first keeps its socket", async () => {
    const hermes = await useHermes(baseSettings(model.url));
    const second = await runCli(["start", "--config", hermes.configPath], { cwd: hermes.dir });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`another hermes (pid ${hermes.process.pid}) is serving ${hermes.socketPath}`);
    // The first one still answers on its socket, and nothing of its database was touched by the second.
    const status = await hermes.cli(["status", "--json"]);
    expect(JSON.parse(status.stdout).pid).toBe(hermes.process.pid);
    expect(hermes.logs.filter((l) => l.msg === "hermes is ready")).toHaveLength(1);
  });

  it("with another socket but the same database is refused too, naming the pid", async () => {
    const hermes = await useHermes(baseSettings(model.url));
    const other = useTempDir();
    const config = writeConfig(other, {
      ...baseSettings(model.url),
      storage: { path: hermes.dbPath },
      connectors: { cron: { enabled: false }, cli: { socket: join(other, "other.sock") } },
    });
    const second = await runCli(["start", "--config", config], { cwd: other });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`another hermes (pid ${hermes.process.pid}) uses the database ${hermes.dbPath}`);
    expect(existsSync(join(other, "other.sock"))).toBe(false);
  });

  it("starts after the first was killed (a stale lock is no lock) and after a clean stop", async () => {
    let hermes = await useHermes(baseSettings(model.url));
    await hermes.kill();
    hermes = await hermes.restart();
    expect((await hermes.ask("hello")).code).toBe(0);
    expect(await hermes.stop()).toBe(0);
    expect(existsSync(`${hermes.dbPath}.pid`)).toBe(false);
    hermes = await hermes.restart();
    expect(readFileSync(`${hermes.dbPath}.pid`, "utf8").split("\n")[0]).toBe(String(hermes.process.pid));
  });

  it("starts when the pid file left by a crash names a living hermes of an earlier boot, or one started since", async () => {
    // A process whose command line says hermes, as the pid's new owner after a reboot might.
    const other = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "hermes"], { stdio: "ignore" });
    onTestFinished(() => void other.kill("SIGKILL"));
    await once(other, "spawn");
    const hermes = await useHermes(baseSettings(model.url));
    const pidFile = `${hermes.dbPath}.pid`;
    const [, boot, started] = readFileSync(pidFile, "utf8").split("\n");
    await hermes.kill();
    writeFileSync(pidFile, `${other.pid}\n00000000-0000-0000-0000-000000000000\n${started}\n`);
    let again = await hermes.restart();
    expect((await again.ask("hello")).code).toBe(0);
    await again.kill();
    writeFileSync(pidFile, `${other.pid}\n${boot}\n1\n`);
    again = await again.restart();
    expect((await again.ask("hello")).code).toBe(0);
    // The file as an earlier version wrote it (the pid alone), naming a living hermes: still refused.
    await again.kill();
    writeFileSync(pidFile, `${other.pid}\n`);
    const refused = await runCli(["start", "--config", again.configPath], { cwd: again.dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`another hermes (pid ${other.pid}) uses the database`);
  });

  it("at the same moment as another lets one of them run: the one whose claim comes second is refused, naming the other's pid", async () => {
    const dir = useTempDir();
    const settings = baseSettings(model.url);
    const config = writeConfig(dir, settings);
    const hook = join(dir, "hold-claim.mjs");
    writeFileSync(hook, HOLD_CLAIM);
    const first = spawn(process.execPath, [...DAEMON_NODE_FLAGS, "--import", pathToFileURL(hook).href, CLI, "start", "--config", config], {
      cwd: dir,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const exited = once(first, "exit");
    onTestFinished(async () => {
      if (first.exitCode === null) first.kill("SIGKILL");
      await exited;
    });
    let stdout = "";
    let stderr = "";
    first.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const held = new Promise<void>((resolve) =>
      first.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
        if (stderr.includes("claim held")) resolve();
      }),
    );
    await held;
    // The first has checked that the socket and the database are free, and is about to claim them.
    const second = await useHermes(settings, { dir });
    first.stdin.end("go");
    const outcome = await new Promise<string>((resolve) => {
      first.stdout.on("data", () => stdout.includes('"hermes is ready"') && resolve("ready"));
      void exited.then(() => resolve("exited"));
    });
    expect(outcome).toBe("exited");
    expect(first.exitCode).toBe(1);
    expect(stderr).toContain(`another hermes (pid ${second.process.pid}) uses the database`);
    const status = await second.cli(["status", "--json"]);
    expect(JSON.parse(status.stdout).pid).toBe(second.process.pid);
  });
});

/**
 * Under systemd the service runs as its own user with ProtectProc=invisible: another user's processes cannot
 * be looked at. After a power cut the stale pid file named a process of root's, and every start was refused.
 */
describe.skipIf(process.getuid?.() !== 0)("the instance claim after an unclean stop, as the service's user", () => {
  it("starts although the stale pid file names a living process of another user that /proc hides", () => {
    const dir = useTempDir();
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, "data"));
    chownSync(join(dir, "data"), NOBODY, NOBODY);
    const config = writeConfig(dir, { model: { base_url: "http://127.0.0.1:9" }, connectors: { cron: { enabled: false } } });
    const script = [
      "mount -o remount,hidepid=invisible /proc",
      "sleep 60 & holder=$!", // root's process, which took the pid the daemon had before the reboot
      `printf '%s\\n' $holder > ${dir}/data/hermes.db.pid && chown ${NOBODY} ${dir}/data/hermes.db.pid`,
      `cd ${dir}`,
      `setpriv --reuid=${NOBODY} --regid=${NOBODY} --clear-groups ${process.execPath} ${CLI} start --config ${config} > out.log 2>&1 & daemon=$!`,
      // Until the daemon is ready or has exited (a refused start exits at once), at most 10 s.
      "for i in $(seq 200); do grep -q 'hermes is ready' out.log && break; kill -0 $daemon 2>/dev/null || break; sleep 0.05; done",
      "kill $daemon $holder; wait $daemon; cat out.log",
    ].join("\n");
    const run = spawnSync("unshare", ["--mount", "--pid", "--fork", "--mount-proc", "sh", "-c", script], { encoding: "utf8" });
    expect(run.stdout).not.toMatch(/another hermes \(pid \d+\) uses the database/);
    expect(run.stdout).toContain('"msg":"hermes is ready"');
  }, 20_000);
});
