// A time zone's name typed in another case ("europe/berlin") passes Intl, but TZ (which `hermes start` sets
// to the configured zone) takes a name in its own spelling only: the daemon's clock ran on UTC, and the 07:00
// briefing fired at 08:00 in winter, 09:00 in summer.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { useModel } from "../helpers/fixture.js";
import { baseSettings, cleanUpTestFile, createTempDir, type Hermes, launch, runCli } from "../helpers/hermes.js";

let home: { path: string; cleanup: () => void } | undefined;
let daemon: Hermes | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  home?.cleanup();
});
afterAll(cleanUpTestFile);

const BRIEFING = "      - { name: morning-briefing, schedule: '0 7 * * *', prompt: hi, deliver: 'cli:owner' }";

async function nextBriefing(zoneLine: string, setupZone?: string): Promise<{ next: string | undefined; zone: unknown }> {
  home = createTempDir();
  const configPath = join(home.path, "hermes.yaml");
  const lines = [
    "model: { base_url: 'http://127.0.0.1:1' }",
    zoneLine,
    "connectors:",
    "  cron:",
    "    enabled: true",
    "    jobs:",
    BRIEFING,
    "",
  ];
  writeFileSync(configPath, lines.join("\n"));
  const env = { HOME: home.path, XDG_CONFIG_HOME: "", HERMES_CONFIG: "", TZ: "UTC" };
  if (setupZone) {
    const setup = await runCli(["setup", "timezone", "--timezone", setupZone, "--non-interactive", "--config", configPath], { env });
    expect(setup.code, setup.stderr).toBe(0);
  }
  daemon = await launch(home.path, configPath, env);
  const listed = await daemon.cli(["schedules", "--json"]);
  const job = (JSON.parse(listed.stdout) as { name: string; next_local: string }[]).find((j) => j.name === "morning-briefing");
  return { next: job?.next_local, zone: parse(readFileSync(configPath, "utf8")).timezone };
}

it("a zone answered to `hermes setup` as europe/berlin is written Europe/Berlin, and a 07:00 job runs at 07:00 there", async () => {
  const { next, zone } = await nextBriefing("", "europe/berlin");
  expect(zone).toBe("Europe/Berlin");
  expect(next).toContain("07:00");
}, 60_000);

it("an alias in another case (us/eastern) runs the daemon's clock in the zone it names", async () => {
  const { next } = await nextBriefing("timezone: us/eastern");
  expect(next).toContain("07:00");
}, 60_000);

it("a zone by its current name (Asia/Kolkata) is what the shell tool's commands get as TZ, not Intl's older alias", async () => {
  // A system whose zoneinfo has the current names only (no legacy links such as Asia/Calcutta).
  home = createTempDir();
  const tzdir = join(home.path, "zoneinfo");
  mkdirSync(join(tzdir, "Asia"), { recursive: true });
  copyFileSync("/usr/share/zoneinfo/Asia/Kolkata", join(tzdir, "Asia", "Kolkata"));
  const model = await useModel();
  const configPath = join(home.path, "hermes.yaml");
  writeFileSync(configPath, stringify({ ...baseSettings(model.url), timezone: "Asia/Kolkata", tools: { enabled: ["shell"] } }));
  daemon = await launch(home.path, configPath, { TZDIR: tzdir });
  model.script({ toolCalls: [{ name: "shell", arguments: { command: "date +%z" } }] }, { text: "done" });
  const before = model.requests.length;
  await daemon.ask("what offset?", "--yes");
  const result = model.requests
    .slice(before)
    .at(-1)
    ?.messages.find((m) => m.role === "tool")?.content;
  expect(result).toContain("+0530");
}, 60_000);
