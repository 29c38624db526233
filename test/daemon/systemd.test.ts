import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import type { NotifySocket } from "../fakes/notify-socket.js";
import { useHermes, useModel, useNotifySocket, useTempDir } from "../helpers/fixture.js";
import {
  baseSettings,
  createTempDir,
  DAEMON_ENV,
  DAEMON_NODE_FLAGS,
  nodeFlagsOf,
  runCli,
  unitEnvironmentOf,
  writeConfig,
} from "../helpers/hermes.js";

const REPO = resolve(import.meta.dirname, "../..");

describe("the systemd units", () => {
  const verify = (unit: string, user: boolean) => {
    const dir = createTempDir();
    try {
      const text = readFileSync(join(REPO, "deploy", unit), "utf8").replace(
        /ExecStart=\/usr\/bin\/node /,
        `ExecStart=${process.execPath} `,
      );
      const path = join(dir.path, "hermes.service");
      writeFileSync(path, text);
      mkdirSync(join(dir.path, "xdg"), { mode: 0o700 });
      const args = user ? ["--user", "verify", path] : ["verify", path];
      return spawnSync("systemd-analyze", args, { encoding: "utf8", env: { ...process.env, XDG_RUNTIME_DIR: join(dir.path, "xdg") } });
    } finally {
      dir.cleanup();
    }
  };

  it("pass systemd-analyze verify: the system unit and the user unit", () => {
    const system = verify("hermes.service", false);
    expect(system.stderr).toBe("");
    expect(system.status).toBe(0);
    const user = verify("hermes-user.service", true);
    expect(user.stderr).toBe("");
    expect(user.status).toBe(0);
  });

  it("start node with the same flags and allocator settings, the V8 flags on Node 22+ only (tests and the bench use them too)", () => {
    const unit = readFileSync(join(REPO, "deploy/hermes.service"), "utf8");
    const userUnit = readFileSync(join(REPO, "deploy/hermes-user.service"), "utf8");
    const unitFlags = nodeFlagsOf(unit);
    expect(unitFlags).toEqual(["--v8-pool-size=1", "--max-semi-space-size=8", "--no-sparkplug"]);
    expect(nodeFlagsOf(userUnit)).toEqual(unitFlags);
    expect(DAEMON_NODE_FLAGS).toEqual(Number(process.versions.node.split(".")[0]) >= 22 ? unitFlags : ["--v8-pool-size=1"]);
    expect(unitEnvironmentOf(unit).MALLOC_ARENA_MAX).toBe("2");
    expect(unitEnvironmentOf(userUnit).MALLOC_ARENA_MAX).toBe("2");
    expect(DAEMON_ENV).toEqual({ MALLOC_ARENA_MAX: "2" });
    // Node accepts them.
    expect(execFileSync(process.execPath, [...unitFlags, "-p", "1"], { encoding: "utf8" }).trim()).toBe("1");
  });

  it("declare readiness, the watchdog, the state/runtime/config/cache directories and hardening", () => {
    const unit = readFileSync(join(REPO, "deploy/hermes.service"), "utf8");
    for (const line of [
      "Type=notify",
      "NotifyAccess=all",
      "WatchdogSec=",
      "Restart=on-failure",
      "After=network-online.target ollama.service",
      "Wants=network-online.target ollama.service",
      "StateDirectory=hermes",
      "RuntimeDirectory=hermes",
      "ConfigurationDirectory=hermes",
      "CacheDirectory=hermes",
      "EnvironmentFile=-/etc/hermes/hermes.env",
      "NoNewPrivileges=yes",
      "ProtectSystem=strict",
      "ProtectHome=yes",
      "PrivateTmp=yes",
      "PrivateDevices=yes",
      "RestrictAddressFamilies=",
      "User=hermes",
      "SyslogIdentifier=hermes",
    ]) {
      expect(unit).toContain(line);
    }
  });
});

describe("the daemon under a (fake) service manager", () => {
  let model: FakeModel;
  let notify: NotifySocket;
  let dir: string;
  beforeEach(async () => {
    model = await useModel();
    dir = useTempDir();
    notify = await useNotifySocket(dir);
  });
  const start = (extra: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}) =>
    useHermes({ ...baseSettings(model.url), ...extra }, { dir, env: { NOTIFY_SOCKET: notify.path, ...env } });

  it("sends READY=1 once the socket serves, pings the watchdog, and stops pinging when a connector is unhealthy", async () => {
    const hermes = await start({}, { WATCHDOG_USEC: "300000" });
    const ready = await notify.waitFor((m) => m.includes("READY=1"));
    expect(ready).toMatch(/STATUS=serving; cli ok/);
    expect(existsSync(hermes.socketPath)).toBe(true);
    const first = notify.messages.length;
    await notify.waitFor((m) => m.includes("WATCHDOG=1"), first);
    await notify.waitFor((m) => m.includes("WATCHDOG=1"), notify.messages.findLastIndex((m) => m.includes("WATCHDOG=1")) + 1);
    rmSync(hermes.socketPath);
    await hermes.waitForLog((l) => l.msg === "unhealthy: watchdog pings paused");
    const status = await notify.waitFor((m) => m.includes("cli down"));
    const after = notify.messages.indexOf(status) + 1;
    await new Promise((r) => setTimeout(r, 1000)); // an absence can only be observed over time: ~6 watchdog intervals
    expect(notify.messages.slice(after).filter((m) => m.includes("WATCHDOG=1"))).toEqual([]);
  });

  it("sends STOPPING=1 on SIGTERM, lets a run in flight finish, and exits 0", async () => {
    model.script({ text: "finished despite the stop", delayMs: 400 });
    const hermes = await start();
    const reply = hermes.ask("slow one");
    await model.waitForRequests(1);
    const exit = hermes.stop();
    await notify.waitFor((m) => m.includes("STOPPING=1"));
    expect((await reply).stdout).toBe("finished despite the stop\n");
    expect(await exit).toBe(0);
  });

  it("records a run that does not finish within the grace period as interrupted, and exits 0", async () => {
    model.script({ hang: true });
    const hermes = await start({ agent: { shutdown_grace_s: 0.3 } });
    const reply = hermes.ask("never answered");
    await model.waitForRequests(1);
    expect(await hermes.stop()).toBe(0);
    const result = await reply;
    expect(result.stdout).toMatch(/interrupted this run/);
    const db = new Database(hermes.dbPath, { readonly: true });
    expect(db.prepare("SELECT status FROM runs").pluck().get()).toBe("interrupted");
    db.close();
  });

  it("reloads hermes.yaml on SIGHUP: a changed tools.enabled changes what the model is offered", async () => {
    const hermes = await start({ tools: { enabled: ["clock", "notes"] } });
    await hermes.ask("before");
    writeConfig(dir, { ...baseSettings(model.url), tools: { enabled: ["clock"] } });
    hermes.process.kill("SIGHUP");
    await hermes.waitForLog((l) => l.msg === "config reloaded");
    await hermes.ask("after");
    const offered = model.requests.map((r) => r.tools.map((t) => t.function?.name));
    expect(offered[0]).toEqual(["clock", "notes"]);
    expect(offered[1]).toEqual(["clock"]);
  });

  it("finishes every reload with READY=1 and a STATUS=, whether the new config was taken or refused", async () => {
    const hermes = await start();
    await notify.waitFor((m) => m.includes("READY=1"));
    const before = notify.messages.length;
    hermes.process.kill("SIGHUP");
    const reloading = await notify.waitFor((m) => m.includes("RELOADING=1"), before);
    expect(reloading).toMatch(/MONOTONIC_USEC=\d+/);
    const taken = await notify.waitFor((m) => m.includes("READY=1"), notify.messages.indexOf(reloading) + 1);
    expect(taken).toMatch(/STATUS=serving; cli ok/);
    writeFileSync(hermes.configPath, "tools:\n  enabled: [teleport]\n");
    const second = notify.messages.length;
    hermes.process.kill("SIGHUP");
    const again = await notify.waitFor((m) => m.includes("RELOADING=1"), second);
    const refused = await notify.waitFor((m) => m.includes("READY=1"), notify.messages.indexOf(again) + 1);
    expect(refused).toMatch(/STATUS=serving; .*config reload refused/);
  });

  it("rejects an invalid config on SIGHUP and keeps serving with the old one", async () => {
    const hermes = await start({ tools: { enabled: ["clock", "notes"] } });
    writeFileSync(hermes.configPath, "tools:\n  enabled: [teleport]\n");
    hermes.process.kill("SIGHUP");
    const line = await hermes.waitForLog((l) => l.msg === "config reload rejected; keeping the running config");
    expect(String(line.detail)).toMatch(/hermes\.yaml:2:\d+: tools\.enabled\.0/);
    const result = await hermes.ask("still there?");
    expect(result.code).toBe(0);
    expect(model.requests[0]?.tools.map((t) => t.function?.name)).toEqual(["clock", "notes"]);
  });
  it("ignores a reload asked for during the graceful stop: no RELOADING=1 or READY=1 after STOPPING=1, and the process exits promptly", async () => {
    // A SIGHUP (or `hermes pair`'s reload) in the stop reloaded a stopping daemon: backups and the model's
    // monitor started again, and the process lingered until the fallback exit.
    model.script({ text: "slow", delayMs: 1500 });
    const hermes = await start({ storage: { backup: { schedule: "30 3 * * *", keep: 2, dir: "./data/backups" } } });
    const reply = hermes.ask("slow one");
    await model.waitForRequests(1);
    const exit = hermes.stop();
    const stopping = await notify.waitFor((m) => m.includes("STOPPING=1"));
    hermes.process.kill("SIGHUP");
    await hermes.waitForLog((l) => l.msg === "reload ignored: hermes is stopping");
    expect(await exit).toBe(0);
    expect((await reply).stdout).toContain("slow");
    const after = notify.messages.slice(notify.messages.indexOf(stopping) + 1);
    expect(after.filter((m) => /RELOADING=1|READY=1/.test(m))).toEqual([]);
    expect(hermes.logs.map((l) => l.msg)).not.toContain("something kept the stopped process alive; exiting");
  }, 25_000);
});

describe("hermes doctor", () => {
  let model: FakeModel;
  let dir: string;
  beforeEach(async () => {
    model = await useModel();
    dir = useTempDir();
  });
  const doctor = (config: string) => runCli(["doctor", "--config", config], { env: { HERMES_SYSTEMD_DIR: join(dir, "units") } });

  it("passes with a reachable endpoint that has the model", async () => {
    const config = writeConfig(dir, baseSettings(model.url));
    const result = await doctor(config);
    expect(result.stdout).toMatch(/✓ config/);
    expect(result.stdout).toMatch(/✓ model .*hermes3:8b is available/);
    expect(result.stdout).toMatch(/! socket .*not running/);
    expect(result.code).toBe(0);
  });

  it("fails with the pull command when the model is missing, and flags a mismatched Ollama drop-in", async () => {
    model.models = ["llama3.2:3b"];
    const config = writeConfig(dir, baseSettings(model.url));
    mkdirSync(join(dir, "units/ollama.service.d"), { recursive: true });
    writeFileSync(join(dir, "units/ollama.service.d/hermes.conf"), '[Service]\nEnvironment="OLLAMA_CONTEXT_LENGTH=8192"\n');
    const result = await doctor(config);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✗ model .*not pulled.*\n\s+fix: ollama pull hermes3:8b/);
    expect(result.stdout).toMatch(/✗ ollama .*OLLAMA_CONTEXT_LENGTH=8192 but model.context_tokens is 16384/);
  });

  it("fails on a broken config, naming the line", async () => {
    const config = join(dir, "hermes.yaml");
    writeFileSync(config, "model:\n  nme: x\n");
    const result = await doctor(config);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✗ config .*hermes\.yaml:2:3: model\.nme: unknown key/);
  });
});

describe("deploy/install.sh", () => {
  it("lays out the files under --root, keeps the config on a second run, and uninstalls keeping the data", () => {
    const dir = createTempDir();
    try {
      const root = join(dir.path, "root");
      const install = () => execFileSync("bash", [join(REPO, "deploy/install.sh"), "--root", root, "--no-deps"], { encoding: "utf8" });
      const out = install();
      expect(out).toContain("(skipped with --root) systemctl enable hermes.service");
      for (const f of [
        "opt/hermes/dist/app/hermes.js",
        "opt/hermes/package.json",
        "opt/hermes/scripts/prepare.mjs",
        "etc/systemd/system/hermes.service",
        "etc/systemd/system/ollama.service.d/hermes.conf",
        "etc/hermes/hermes.yaml",
        "etc/hermes/hermes.env",
        "usr/local/bin/hermes",
        "var/lib/hermes",
      ]) {
        expect(existsSync(join(root, f)), f).toBe(true);
      }
      expect(readFileSync(join(root, "etc/systemd/system/hermes.service"), "utf8")).toContain(
        `ExecStart=${[execFileSync("sh", ["-c", "command -v node"], { encoding: "utf8" }).trim(), ...DAEMON_NODE_FLAGS].join(" ")} /opt/hermes/dist/app/hermes.js start`,
      );
      // The bundle carries its own dependencies but for the native and lazily loaded ones.
      expect(execFileSync(process.execPath, [join(root, "opt/hermes/dist/app/hermes.js"), "--help"], { encoding: "utf8" })).toContain(
        "Usage: hermes",
      );
      writeFileSync(join(root, "etc/hermes/hermes.yaml"), "model:\n  context_tokens: 8192\n");
      expect(install()).toContain("kept");
      expect(readFileSync(join(root, "etc/hermes/hermes.yaml"), "utf8")).toContain("8192");
      expect(readFileSync(join(root, "etc/systemd/system/ollama.service.d/hermes.conf"), "utf8")).toContain("OLLAMA_CONTEXT_LENGTH=8192");
      execFileSync("bash", [join(REPO, "deploy/install.sh"), "--root", root, "--uninstall"], { encoding: "utf8" });
      expect(existsSync(join(root, "opt/hermes"))).toBe(false);
      expect(existsSync(join(root, "etc/systemd/system/hermes.service"))).toBe(false);
      expect(existsSync(join(root, "etc/hermes/hermes.yaml"))).toBe(true);
      expect(existsSync(join(root, "var/lib/hermes"))).toBe(true);
      execFileSync("bash", [join(REPO, "deploy/install.sh"), "--root", root, "--uninstall", "--purge"], { encoding: "utf8" });
      expect(existsSync(join(root, "etc/hermes"))).toBe(false);
    } finally {
      dir.cleanup();
    }
  });

  it("refuses clearly without root privileges or systemd", () => {
    const result = spawnSync("bash", [join(REPO, "deploy/install.sh")], { encoding: "utf8" });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/run as root|not running systemd/);
  });
});
