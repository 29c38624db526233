// A small ntfy server for tests: the parts of ntfy's HTTP API the connector uses, as ntfy answers them.
// POST /<topic> publishes (Title header, body = message) and answers the message as JSON; GET
// /<topic,topic…>/json?since=<id|all> streams one JSON object a line: an "open" event, the cached
// messages after `since`, then new ones as they are published, with "keepalive" events in between.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";

/** Starts the fake on 127.0.0.1 (a free port); `token`, when given, is required as a Bearer token. */
export async function startFakeNtfy({ token } = {}) {
  const messages = [];
  const subscribers = new Set();
  const server = createServer((req, res) => {
    if (token && req.headers.authorization !== `Bearer ${token}`) return void json(res, 401, { code: 40101, error: "unauthorized" });
    const url = new URL(req.url ?? "/", "http://ntfy");
    const [first, second] = url.pathname.split("/").filter(Boolean);
    if (req.method === "GET" && first && second === "json") return subscribe(res, first.split(","), url.searchParams.get("since"));
    if ((req.method === "POST" || req.method === "PUT") && first && !second) return void publish(req, res, first);
    json(res, 404, { code: 40401, error: "page not found" });
  });

  function publish(req, res, topic) {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const message = {
        id: randomBytes(6).toString("hex"),
        time: Math.floor(Date.now() / 1000),
        event: "message",
        topic,
        message: body,
        ...(req.headers.title && { title: String(req.headers.title) }),
      };
      messages.push(message);
      for (const s of subscribers) if (s.topics.includes(topic)) s.res.write(`${JSON.stringify(message)}\n`);
      json(res, 200, message);
    });
  }

  function subscribe(res, topics, since) {
    res.writeHead(200, { "Content-Type": "application/x-ndjson; charset=utf-8" });
    res.write(
      `${JSON.stringify({ id: randomBytes(6).toString("hex"), time: Math.floor(Date.now() / 1000), event: "open", topic: topics.join(",") })}\n`,
    );
    const at = since && since !== "all" ? messages.findIndex((m) => m.id === since) : -1;
    const backlog = since ? messages.slice(at + 1) : [];
    for (const m of backlog) if (topics.includes(m.topic)) res.write(`${JSON.stringify(m)}\n`);
    const subscriber = { topics, res };
    subscribers.add(subscriber);
    const keepalive = setInterval(
      () => res.write(`${JSON.stringify({ event: "keepalive", time: Math.floor(Date.now() / 1000) })}\n`),
      25_000,
    );
    keepalive.unref();
    res.on("close", () => {
      clearInterval(keepalive);
      subscribers.delete(subscriber);
    });
  }

  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    messages,
    /** Ends every open subscription, as a restarted ntfy would. */
    dropSubscribers() {
      for (const s of subscribers) s.res.destroy();
    },
    close() {
      for (const s of subscribers) s.res.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function json(res, status, body) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(`${JSON.stringify(body)}\n`);
}
