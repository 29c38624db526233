// hermes-connector-ntfy: a hermes connector plugin for ntfy (https://ntfy.sh). Each ntfy topic in
// `options.topics` is a chat; a message's Title is who wrote it (ntfy carries no sender of its own, so the
// topic's access token is what keeps others out: see docs/connectors.md). Replies are published to the
// same topic with the title "hermes"; ntfy has no buttons that report who pressed them, so approvals are
// asked in text (/approve <id>).
import { publish, subscribe } from "./ntfy.js";

export { testDriver } from "./driver.js";

/** ntfy turns a message over 4,096 bytes into an attachment; replies are kept under that. */
const TEXT_LIMIT = 4000;
const RETRY_MS = [1000, 2000, 5000, 15000, 60000];

/** Checked by hermes before create(): a wrong option is reported at its line in hermes.yaml. */
const optionsSchema = {
  type: "object",
  properties: {
    server: { type: "string", pattern: "^https?://" },
    topics: { type: "array", items: { type: "string", pattern: "^[-_A-Za-z0-9]{1,64}$" }, minItems: 1 },
    token: { type: "string" },
    title: { type: "string", default: "hermes" },
  },
  required: ["server", "topics"],
  additionalProperties: false,
};

/** @type {import("hermes/connector").ConnectorPlugin<{ server: string, topics: string[], token?: string, title: string }>} */
export default {
  api: 1,
  optionsSchema,
  create(host, options) {
    const server = options.server.replace(/\/+$/, "");
    const ntfy = { server, token: options.token };
    const title = options.title ?? "hermes";
    /** Ids of what we published: the stream brings our own messages back. */
    const ours = new Set();
    let life = new AbortController();
    let state = { phase: "stopped", detail: "not started", failures: 0 };

    async function onMessage(event) {
      if (ours.has(event.id) || event.title === title) return;
      // Resolves once hermes has stored it; only then is the cursor moved past it.
      await host.receive({ chat: event.topic, user: event.title || "unknown", text: event.message, id: event.id });
      host.state.set("since", event.id);
    }

    async function follow(opened) {
      while (!life.signal.aborted) {
        try {
          await subscribe(
            ntfy,
            options.topics,
            host.state.get("since") ?? "all",
            life.signal,
            () => {
              state = { phase: "open", detail: `subscribed to ${options.topics.join(", ")} on ${server}`, failures: 0 };
              opened();
            },
            onMessage,
          );
        } catch (err) {
          if (life.signal.aborted) return;
          state = { phase: err.fatal ? "refused" : "retrying", detail: err.message, failures: state.failures + 1 };
          host.log.warn({ err: err.message }, "the ntfy stream failed; reconnecting");
        }
        await pause(RETRY_MS[Math.min(state.failures, RETRY_MS.length - 1)], life.signal);
      }
    }

    return {
      limits: { text: TEXT_LIMIT, buttons: false },
      async start() {
        life = new AbortController();
        await new Promise((resolve) => {
          void follow(resolve);
          // A server that is down at boot does not hold hermes up: health says so, and it keeps trying.
          setTimeout(resolve, 3000).unref();
        });
      },
      async stop() {
        life.abort();
        state = { phase: "stopped", detail: "stopped", failures: 0 };
      },
      health() {
        return { ok: state.phase === "open", detail: state.detail };
      },
      async send(chat, message) {
        const sent = await publish(ntfy, chat, message.text, title);
        ours.add(sent.id);
        return { id: sent.id };
      },
    };
  },
};

function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
