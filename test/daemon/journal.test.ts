import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeEach, describe, expect, it, onTestFinished } from "vitest";
import type { FakeModel } from "../fakes/model-server.js";
import { useModel, useTempDir } from "../helpers/fixture.js";
import { baseSettings, CLI, DAEMON_NODE_FLAGS, writeConfig } from "../helpers/hermes.js";

const REPO = resolve(import.meta.dirname, "../..");

/**
 * Starts the daemon the way systemd does when its stdout is the journal: JOURNAL_STREAM names the
 * device:inode of that very stream (here the pipe the test reads), and lines are read as journald reads them.
 */
function startUnderJournal(dir: string, configPath: string) {
  const command = `JOURNAL_STREAM=$(stat -L -c %d:%i /proc/$$/fd/1) exec "$0" "$@"`;
  const child = spawn("sh", ["-c", command, process.execPath, ...DAEMON_NODE_FLAGS, CLI, "start", "--config", configPath], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const waiters: { match: RegExp; resolve: (line: string) => void }[] = [];
  let buffer = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      lines.push(line);
      for (const w of waiters.filter((w) => w.match.test(line))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  onTestFinished(async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
  });
  return {
    child,
    lines,
    waitForLine: (match: RegExp) =>
      lines.find((l) => match.test(l)) ??
      new Promise<string>((resolveLine, reject) => {
        waiters.push({ match, resolve: resolveLine });
        void exited.then((code) => reject(new Error(`hermes exited with ${code}:\n${lines.join("\n")}`)));
      }),
    stop: () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

describe("the log when stdout is the journal", () => {
  let model: FakeModel;
  let dir: string;
  beforeEach(async () => {
    model = await useModel();
    dir = useTempDir();
  });

  it("writes readable lines with the syslog priority prefix journald reads: <6> info, <3> error", async () => {
    const config = writeConfig(dir, baseSettings(model.url));
    const daemon = startUnderJournal(dir, config);
    const ready = await daemon.waitForLine(/hermes is ready/);
    expect(ready).toMatch(/^<6>hermes is ready version=\S+ config=\S+hermes\.yaml connectors=\["cli"\]/);
    writeFileSync(config, "tools:\n  enabled: [teleport]\n");
    daemon.child.kill("SIGHUP");
    const rejected = await daemon.waitForLine(/config reload rejected/);
    expect(rejected).toMatch(/^<3>config reload rejected; keeping the running config detail=".*hermes\.yaml:2:\d+: tools\.enabled\.0/);
    expect(await daemon.stop()).toBe(0);
    // Every line carries its priority and none is JSON: `journalctl -p warning` and `-t hermes` find them.
    for (const line of daemon.lines) expect(line).toMatch(/^<[2-7]>[^{]/);
  });

  it("keeps pino JSON when the config asks for it (log.format: json)", async () => {
    const config = writeConfig(dir, { ...baseSettings(model.url), log: { level: "info", format: "json" } });
    const daemon = startUnderJournal(dir, config);
    const ready = await daemon.waitForLine(/hermes is ready/);
    expect(JSON.parse(ready)).toMatchObject({ level: 30, msg: "hermes is ready" });
  });

  it("is filed under `hermes` by both units (SyslogIdentifier), not under node", () => {
    for (const unit of ["hermes.service", "hermes-user.service"]) {
      expect(readFileSync(join(REPO, "deploy", unit), "utf8")).toMatch(/^SyslogIdentifier=hermes$/m);
    }
  });
});
