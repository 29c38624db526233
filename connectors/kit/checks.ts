import type { SentMessage } from "../sdk/types.js";
import type { Harness } from "./harness.js";
import { longText } from "./scripted-model.js";
import { type Control, OWNER, STRANGER, type SubjectProfile } from "./subject.js";

/** One conformance check: what a user would notice, in a fresh world. Throws with what it saw when it fails. */
export interface Check {
  name: string;
  control?: Partial<Control>;
  /** A note ("not applicable: why") when the subject's profile rules the check out; it is then not run. */
  skip?(profile: SubjectProfile): string | undefined;
  /** Resolves a note when the check does not apply to this connector (say, buttons on a network without them). */
  run(h: Harness): Promise<void | string>;
}

const NO_BUTTONS = "not applicable: limits.buttons is false (approvals are checked in text)";

const has = (text: string) => (messages: SentMessage[]) => messages.some((m) => m.text.includes(text));

function expect(ok: boolean, message: string): void {
  if (!ok) throw new Error(message);
}

function buttonsOf(messages: SentMessage[]): SentMessage | undefined {
  return messages.find((m) => (m.buttons?.length ?? 0) >= 2);
}

export const CHECKS: Check[] = [
  {
    name: "its health is green once started, and health() answers without throwing",
    async run(h) {
      // A connector may be red for a while as it connects; one that never turns green (health() throws or
      // is async, start() never settles, it says it is down against the driver's network) shows red in status.
      const health = await greenHealth(h);
      expect(health?.ok === true, `hermes status shows the connector red: ${JSON.stringify(health?.detail ?? "not listed")}`);
    },
  },
  {
    name: "one message gets one reply in the same chat",
    async run(h) {
      await h.inbound("c1", OWNER, "hello one");
      await h.waitFor("c1", "the reply", has("reply to hello one"));
      const shown = await h.settled("c1");
      expect(shown.length === 1, `expected one message in the chat, saw ${shown.length}`);
      expect(h.model.calls.length === 1, `expected one model call, saw ${h.model.calls.length}`);
    },
  },
  {
    name: "a stranger reaches no model and gets one notice naming their id",
    async run(h) {
      const notice = h.subject.profile.strangerNotice;
      if (notice !== true) return strangerIgnored(h, notice);
      const id = h.network.userId(STRANGER);
      await h.inbound("s1", STRANGER, "hello from a stranger");
      await h.waitFor("s1", "a notice naming the stranger's id", has(id));
      await h.inbound("s1", STRANGER, "hello again");
      const shown = await h.settled("s1");
      expect(shown.length === 1, `expected one notice, saw ${shown.length} messages`);
      expect(h.model.calls.length === 0, `a stranger's message reached the model (${h.model.calls.length} calls)`);
      return undefined;
    },
  },
  {
    name: "a long reply is split in order under limits.text",
    async run(h) {
      const limit = h.network.limits().text;
      await h.inbound("l1", OWNER, `long ${limit}`);
      const expected = longText(limit).split("\n");
      await h.waitFor("l1", "every part of the long reply", has(expected.at(-1) ?? ""));
      const all = await h.settled("l1");
      expect(all.length >= 2, `expected the reply in several messages, saw ${all.length}`);
      const over = all.find((m) => m.text.length > limit);
      expect(!over, `a message of ${over?.text.length} characters is over limits.text (${limit})`);
      const lines = all.flatMap((m) => m.text.split("\n")).filter((l) => l.startsWith("line "));
      expect(lines.join("\n") === expected.join("\n"), "the parts do not add up to the reply in order");
    },
  },
  {
    name: "a streamed reply ends as one message",
    async run(h) {
      await h.inbound("t1", OWNER, "stream s1");
      const final = "streamed reply s1: w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12";
      await h.waitFor("t1", "the whole streamed reply", (m) => m.some((x) => x.text.trim() === final));
      const shown = await h.settled("t1");
      expect(shown.length === 1, `expected one message (edited while it streamed), saw ${shown.length}`);
    },
  },
  {
    name: "approval buttons decide once, only for allowed users",
    async run(h) {
      if (!h.network.limits().buttons) return NO_BUTTONS;
      await h.inbound("a1", OWNER, "approve-me b1");
      const request = buttonsOf(await h.waitFor("a1", "an approval request with two buttons", (m) => !!buttonsOf(m)));
      const approve = request?.buttons?.find((b) => /approve/i.test(b.label))?.id ?? request?.buttons?.[0]?.id ?? "";
      const deny = request?.buttons?.find((b) => /deny/i.test(b.label))?.id ?? "";
      await h.press("a1", STRANGER, approve);
      await h.settled("a1");
      expect(h.control.toolRuns.length === 0, "a press by a user not in allowed_users ran the action");
      await h.press("a1", OWNER, approve);
      await h.waitFor("a1", "the reply after approval", has("kit action b1 ran"));
      await h.press("a1", OWNER, deny);
      await h.press("a1", OWNER, approve);
      const shown = await h.settled("a1");
      expect(h.control.toolRuns.length === 1, `the action ran ${h.control.toolRuns.length} times`);
      expect(shown.filter((m) => m.text.includes("kit action b1 ran")).length === 1, "the reply after approval was shown more than once");
      if (h.network.limits().edits) expect(!buttonsOf(shown), "the decided request still shows its buttons");
      return undefined;
    },
  },
  {
    name: "an approval button decides after a restart",
    async run(h) {
      if (!h.network.limits().buttons) return NO_BUTTONS;
      await h.inbound("r1", OWNER, "approve-me r1");
      const request = buttonsOf(await h.waitFor("r1", "an approval request with two buttons", (m) => !!buttonsOf(m)));
      await h.restart();
      const approve = request?.buttons?.find((b) => /approve/i.test(b.label))?.id ?? "";
      await h.press("r1", OWNER, approve);
      await h.waitFor("r1", "the reply after approval", has("kit action r1 ran"));
      await h.press("r1", OWNER, approve);
      await h.settled("r1");
      expect(h.control.toolRuns.length === 1, `the action ran ${h.control.toolRuns.length} times`);
      return undefined;
    },
  },
  {
    name: "approvals are asked in text when limits.buttons is false",
    control: { textApprovals: true },
    skip: (profile) => (profile.textApprovals === true ? undefined : profile.textApprovals),
    async run(h) {
      await h.inbound("x1", OWNER, "approve-me x1");
      const shown = await h.waitFor("x1", "an approval request naming /approve <id>", has("/approve "));
      const id = /\/approve (\S+)/.exec(shown.map((m) => m.text).join("\n"))?.[1] ?? "";
      expect(!buttonsOf(shown), "buttons were sent although limits.buttons is false");
      await h.inbound("x1", STRANGER, `/approve ${id}`);
      await h.settled("x1");
      expect(h.control.toolRuns.length === 0, "/approve from a user not in allowed_users ran the action");
      await h.inbound("x1", OWNER, `/approve ${id}`);
      await h.waitFor("x1", "the reply after approval", has("kit action x1 ran"));
      expect(h.control.toolRuns.length === 1, `the action ran ${h.control.toolRuns.length} times`);
    },
  },
  {
    name: "the same inbound id runs once, also after a restart",
    async run(h) {
      await h.inbound("d1", OWNER, "hello twice");
      await h.waitFor("d1", "the reply", has("reply to hello twice"));
      const unsupported = await h.network.redeliver("d1", OWNER, "hello twice");
      if (unsupported) return unsupported;
      await h.restart();
      await h.network.redeliver("d1", OWNER, "hello twice");
      const shown = await h.settled("d1");
      const runs = h.model.calls.filter((c) => c === "hello twice").length;
      expect(runs === 1, `the message ran ${runs} times`);
      expect(shown.filter((m) => m.text.includes("reply to hello twice")).length === 1, "the reply was shown more than once");
      return undefined;
    },
  },
  {
    name: "a delivery target <name>:<chat> reaches the chat",
    async run(h) {
      const { messageId } = await h.daemon.core.deliver(`${h.subject.name}:${h.network.chatId("v1")}`, "a delivered note");
      const shown = await h.waitFor("v1", "the delivered note", has("a delivered note"));
      expect(
        shown.some((m) => m.id === messageId),
        `deliver resolved id ${messageId}, which the chat does not show`,
      );
    },
  },
  {
    name: "a throwing send turns the plugin's health red and leaves the daemon up",
    control: { failSendTo: "boom" },
    async run(h) {
      await h.inbound("boom", OWNER, "hello boom");
      const expected = h.subject.profile.failedSendHealth;
      if (expected instanceof RegExp) {
        const health = await redHealth(h, expected);
        expect(
          health?.ok === false && expected.test(health.detail),
          `expected the connector's health red with the reason, saw ${JSON.stringify(health)}`,
        );
      } else {
        await h.waitFor("boom", "the model's answer to be sent (and refused)", () => h.model.calls.includes("hello boom"));
        await h.settled("boom");
      }
      await h.inbound("c2", OWNER, "hello after");
      await h.waitFor("c2", "a reply after the failure", has("reply to hello after"));
      return typeof expected === "string" ? expected : undefined;
    },
  },
];

/** A network that tells strangers nothing (mail: no backscatter): their messages reach no model and get no answer. */
async function strangerIgnored(h: Harness, why: string): Promise<string> {
  await h.inbound("s1", STRANGER, "hello from a stranger");
  await h.inbound("s1", STRANGER, "hello again");
  // Once the owner's later message is answered (and the rest has settled), the stranger's have been looked at.
  await h.inbound("c1", OWNER, "hello after strangers");
  await h.waitFor("c1", "the owner's reply", has("reply to hello after strangers"));
  const shown = await h.settled("s1");
  expect(shown.length === 0, `a stranger was answered: ${JSON.stringify(shown.map((m) => m.text.slice(0, 80)))}`);
  expect(h.model.calls.length === 1, `a stranger's message reached the model (${h.model.calls.join(" | ")})`);
  const problem = await h.network.strangerLeftAlone?.();
  expect(!problem, problem ?? "");
  return `checked without the notice: ${why}`;
}

type Health = { ok: boolean; detail: string };

/** Polls the connector's health until `done` accepts it or `ms` have passed; the last one seen. */
async function pollHealth(h: Harness, done: (health: Health) => boolean, ms: number): Promise<Health | undefined> {
  const end = Date.now() + ms;
  let health: Health | undefined;
  while (Date.now() < end) {
    health = (await h.daemon.core.status()).connectors.find((c) => c.name === h.subject.name);
    if (health && done(health)) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  return health;
}

/** Green, for as long as a check waits for what it expects. */
const greenHealth = (h: Harness) => pollHealth(h, (health) => health.ok, h.timeoutMs);

/** Red with the expected reason (a connector may be red for a while as it connects first). */
const redHealth = (h: Harness, reason: RegExp) => pollHealth(h, (health) => !health.ok && reason.test(health.detail), 15_000);
