// The ntfy side of the connector: publish a message (HTTP POST), and subscribe to topics (a JSON stream,
// one object a line). Only the parts of ntfy's API the connector uses; see https://docs.ntfy.sh.

/**
 * Publishes `text` to `topic`; resolves ntfy's message object ({ id, time, topic, message, title }).
 * @param {{ server: string, token?: string }} options
 */
export async function publish(options, topic, text, title) {
  const res = await fetch(`${options.server}/${encodeURIComponent(topic)}`, {
    method: "POST",
    headers: { ...auth(options), Title: title },
    body: text,
  });
  if (!res.ok) throw new Error(`ntfy answered ${res.status} to a publish on ${topic}: ${(await res.text()).slice(0, 200)}`);
  return res.json();
}

/**
 * Reads the JSON stream of `topics` from `since` (a message id, or "all"), calling `onMessage` for each
 * message event in order and waiting for it (so a cursor is moved only past handled messages). Resolves
 * when the server ends the stream; rejects on a network error or when `signal` aborts.
 */
export async function subscribe(options, topics, since, signal, onOpen, onMessage) {
  const url = `${options.server}/${topics.map(encodeURIComponent).join(",")}/json?since=${encodeURIComponent(since)}`;
  const res = await fetch(url, { headers: auth(options), signal });
  if (res.status === 401 || res.status === 403)
    throw Object.assign(new Error(`ntfy refused the token (${res.status}): check options.token`), { fatal: true });
  if (!res.ok || !res.body) throw new Error(`ntfy answered ${res.status} to a subscription`);
  onOpen();
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of res.body) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline = buffered.indexOf("\n");
    while (newline >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line) await handleLine(line, onMessage);
      newline = buffered.indexOf("\n");
    }
  }
}

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
