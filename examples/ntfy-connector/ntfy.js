// The ntfy side of the connector: publish a message (HTTP POST), and subscribe to topics (a JSON stream,
// one object a line). Only the parts of ntfy's API the connector uses; see https://docs.ntfy.sh.
// It speaks node:http (node:https for an https:// server, loaded then), which hermes has loaded anyway:
// Node's fetch would bring undici and web streams into the daemon, ~14 MB of memory and ~30 ms of start.
// It is required, not imported: from Node 24 an ES import of node:http reads every export of the module,
// among them the WebSocket classes it lends from undici, which loads undici all the same.
import { createRequire } from "node:module";

/** @type {typeof import("node:http")} */
const { request: httpRequest } = createRequire(import.meta.url)("node:http");

/** ntfy sends a keepalive event every 45 s by default: a stream silent for longer is dead. */
const SILENCE_MS = 120_000;

/**
 * Publishes `text` to `topic`; resolves ntfy's message object ({ id, time, topic, message, title }).
 * @param {{ server: string, token?: string }} options
 */
export async function publish(options, topic, text, title) {
  const res = await send(`${options.server}/${encodeURIComponent(topic)}`, {
    method: "POST",
    headers: { ...auth(options), Title: title, "Content-Length": Buffer.byteLength(text) },
    body: text,
  });
  const body = await readText(res);
  if (!ok(res)) throw new Error(`ntfy answered ${res.statusCode} to a publish on ${topic}: ${body.slice(0, 200)}`);
  return JSON.parse(body);
}

/**
 * Reads the JSON stream of `topics` from `since` (a message id, or "all"), calling `onMessage` for each
 * message event in order and waiting for it (so a cursor is moved only past handled messages). Resolves
 * when the server ends the stream; rejects on a network error, a silent stream, or when `signal` aborts.
 */
export async function subscribe(options, topics, since, signal, onOpen, onMessage) {
  const url = `${options.server}/${topics.map(encodeURIComponent).join(",")}/json?since=${encodeURIComponent(since)}`;
  const res = await send(url, { method: "GET", headers: auth(options), signal, silenceMs: SILENCE_MS });
  if (res.statusCode === 401 || res.statusCode === 403) {
    res.resume();
    throw Object.assign(new Error(`ntfy refused the token (${res.statusCode}): check options.token`), { fatal: true });
  }
  if (!ok(res)) {
    res.resume();
    throw new Error(`ntfy answered ${res.statusCode} to a subscription`);
  }
  onOpen();
  res.setEncoding("utf8");
  let buffered = "";
  for await (const chunk of res) {
    buffered += chunk;
    let newline = buffered.indexOf("\n");
    while (newline >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line) await handleLine(line, onMessage);
      newline = buffered.indexOf("\n");
    }
  }
}

/** One request; resolves the response once its headers are in. */
async function send(url, { method, headers, body, signal, silenceMs }) {
  const target = new URL(url);
  const request = target.protocol === "https:" ? (await import("node:https")).request : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(target, { method, headers, signal }, resolve);
    req.on("error", reject);
    if (silenceMs) req.setTimeout(silenceMs, () => req.destroy(new Error(`ntfy sent nothing for ${silenceMs / 1000} s`)));
    req.end(body);
  });
}

async function readText(res) {
  res.setEncoding("utf8");
  let text = "";
  for await (const chunk of res) text += chunk;
  return text;
}

const ok = (res) => res.statusCode >= 200 && res.statusCode < 300;

async function handleLine(line, onMessage) {
  let event;
  try {
    event = JSON.parse(line);
  } catch {
    return; // not ntfy's JSON: nothing a user wrote
  }
  if (event?.event === "message" && typeof event.message === "string") await onMessage(event);
}

function auth(options) {
  return options.token ? { Authorization: `Bearer ${options.token}` } : {};
}
