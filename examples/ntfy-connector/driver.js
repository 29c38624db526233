// The conformance kit's hands on ntfy (`hermes connector-test`): a fake ntfy server where the kit writes
// as users (a message titled with the user's name, as a phone would publish it) and reads what hermes
// published. Loaded only when the kit runs.

const TOKEN = "kit-token";
let fake;

/** @type {import("hermes/connector").TestDriver} */
export const testDriver = {
  async setup(context) {
    const { startFakeNtfy } = await import("./fake-ntfy.js");
    fake = await startFakeNtfy({ token: TOKEN });
    return { options: { server: fake.url, topics: context?.chats ?? ["c1"], token: TOKEN } };
  },
  async inbound({ chat, user, text }) {
    const res = await fetch(`${fake.url}/${chat}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${TOKEN}`, Title: user },
      body: text,
    });
    if (!res.ok) throw new Error(`the fake ntfy refused a publish: ${res.status}`);
  },
  press() {
    throw new Error("ntfy has no buttons that report who pressed them; this connector asks approvals in text");
  },
  sent(chat) {
    return fake.messages.filter((m) => m.topic === chat && m.title === "hermes").map((m) => ({ id: m.id, text: m.message }));
  },
  async teardown() {
    await fake?.close();
    fake = undefined;
  },
};
