import { readFileSync } from "node:fs";
import { createConnection } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { ConfigError } from "../../src/errors.js";
import { parseToolCallText } from "../../src/model/tool-call-text.js";
import { type FakeModel, startFakeModel } from "../fakes/model-server.js";
import { baseSettings, type Hermes, startHermes } from "../helpers/hermes.js";

const SOAK = process.env.HERMES_SOAK === "1";
const ROUNDS = SOAK ? 20_000 : 2_000;

/** A small deterministic PRNG, so a failure can be replayed from its seed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function mutate(text: string, random: () => number): string {
  const chars = [...text];
  const edits = 1 + Math.floor(random() * 4);
  const alphabet = [
    "{",
    "}",
    '"',
    "\\",
    ":",
    ",",
    "<",
    ">",
    "/",
    "\n",
    " ",
    "\u0000",
    "\u2028",
    "é",
    "𝄞",
    "]",
    "[",
    "-",
    "#",
    "&",
    "*",
    "'",
    "`",
    "$",
  ];
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(random() * (chars.length + 1));
    const op = random();
    if (op < 0.4) chars.splice(at, 1);
    else if (op < 0.8) chars.splice(at, 0, alphabet[Math.floor(random() * alphabet.length)] as string);
    else chars.splice(at, Math.floor(random() * 10));
  }
  return chars.join("");
}

/** Jobs and hooks reach the checks that look across sections (delivery targets, tool lists, schedules). */
const WITH_JOBS_AND_HOOKS = `connectors:
  telegram: { enabled: true, token: "123:abc", allowed_users: [42] }
  discord: { enabled: true, token: "d-token", allowed_users: ["1234567890"] }
  cron:
    jobs:
      - { name: brief, schedule: "0 7 * * *", prompt: "the day ahead", deliver: "telegram:42", tools: [clock] }
      - name: weekly
        schedule: "30 18 * * 5"
        prompt: "the week"
        deliver: "discord:user:1234567890"
        timezone: Europe/Berlin
  http:
    enabled: true
    token: "http-token-1"
    hooks:
      - { name: deploy, prompt: "summarise {{body}}", deliver: "cli:ops", tools: [clock, notes] }
      - { name: alert, prompt: "alert", deliver: "telegram:-100123", secret: "s3cret" }
tools:
  enabled: [clock, notes]
`;

describe("hostile input", () => {
  it(`the tool-call parser never throws on ${ROUNDS} random and mutated replies`, () => {
    const random = rng(42);
    const seeds = [
      '<tool_call>{"name": "clock", "arguments": {}}</tool_call>',
      'Text <tool_call>\n{"name": "notes", "arguments": {"action": "add", "text": "a {b} c"}}\n</tool_call> more',
      '```json\n{"name": "clock", "arguments": {"timezone": "UTC"}}\n```',
    ];
    for (let i = 0; i < ROUNDS; i++) {
      const text = mutate(seeds[i % seeds.length] as string, random);
      const parsed = parseToolCallText(text, { fenced: true });
      for (const call of parsed.calls) expect(typeof call.name).toBe("string");
    }
  });

  it("every malformed variant of hermes.yaml, and of a config with jobs and hooks, is rejected with file:line:col, and none crashes the loader", () => {
    const random = rng(7);
    const originals = [readFileSync(new URL("../../hermes.yaml", import.meta.url), "utf8"), WITH_JOBS_AND_HOOKS];
    let rejected = 0;
    for (let i = 0; i < (SOAK ? 10_000 : 600); i++) {
      const text = mutate(originals[i % originals.length] as string, random);
      try {
        parseConfig(text, "hermes.yaml", {});
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        for (const p of (err as ConfigError).problems) {
          expect(p.line).toBeGreaterThanOrEqual(1);
          expect(p.col).toBeGreaterThanOrEqual(1);
        }
        expect((err as ConfigError).message).toMatch(/^hermes\.yaml:\d+:\d+:/);
        rejected++;
      }
    }
    expect(rejected).toBeGreaterThan(0);
  });

  describe("on the socket", () => {
    let model: FakeModel;
    let hermes: Hermes;
    beforeAll(async () => {
      model = await startFakeModel();
      model.respond(() => ({ text: "fine" }));
      hermes = await startHermes(baseSettings(model.url));
    });
    afterAll(async () => {
      await hermes.stop();
      await model.close();
    });

    it("answers or closes cleanly on random bytes, mutated requests, control characters and invalid UTF-8, and keeps serving", async () => {
      const random = rng(1234);
      const valid = [
        '{"v":1,"id":"1","op":"hello"}',
        '{"v":1,"id":"2","op":"status"}',
        '{"v":1,"id":"3","op":"approvals"}',
        '{"v":1,"id":"4","op":"audit","limit":3}',
      ];
      const connections = SOAK ? 200 : 30;
      for (let c = 0; c < connections; c++) {
        const socket = createConnection(hermes.socketPath);
        await new Promise((r) => socket.once("connect", r));
        let received = "";
        socket.on("data", (d) => {
          received += d.toString("utf8");
        });
        socket.on("error", () => {});
        const lines: Buffer[] = [];
        for (let i = 0; i < 20; i++) {
          const pick = random();
          if (pick < 0.3) lines.push(Buffer.from(Array.from({ length: Math.floor(random() * 200) }, () => Math.floor(random() * 256))));
          else if (pick < 0.9) lines.push(Buffer.from(mutate(valid[i % valid.length] as string, random)));
          else lines.push(Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x1b, 0x5b, 0x32, 0x4a, 0x7d]));
        }
        socket.write(Buffer.concat(lines.map((l) => Buffer.concat([l, Buffer.from("\n")]))));
        socket.write('{"v":1,"id":"last","op":"hello"}\n');
        await new Promise<void>((resolve) => {
          const check = () => (received.includes('"id":"last"') ? resolve() : undefined);
          socket.on("data", check);
          socket.on("close", () => resolve());
          check();
        });
        for (const line of received.trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow();
        socket.destroy();
      }
      const ask = await hermes.ask("still alive?");
      expect(ask.stdout).toBe("fine\n");
      expect(hermes.process.exitCode).toBeNull();
    });
  });
});
