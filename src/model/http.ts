// Requests over node:http(s) on keep-alive agents: the Ollama client and its probe.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/**
 * POSTs JSON over node:http(s) on a keep-alive agent and resolves with the response as it starts.
 * On Node 20 this takes about a millisecond less per call than fetch, which adds up when a queue of
 * chats waits on one model; and it spares the daemon loading fetch (undici) at start.
 */
export function postJson(url: URL | string, body: string, signal: AbortSignal): Promise<IncomingMessage> {
  return send(url, "POST", signal, body);
}

/** GET over the same agents. */
export function get(url: string, signal: AbortSignal, extra?: Record<string, string>): Promise<IncomingMessage> {
  return send(url, "GET", signal, undefined, extra);
}

function send(
  url: URL | string,
  method: string,
  signal: AbortSignal,
  body?: string,
  extra?: Record<string, string>,
): Promise<IncomingMessage> {
  const target = typeof url === "string" ? new URL(url) : url;
  const secure = target.protocol === "https:";
  const sized = body === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(body) };
  const headers = extra ? { ...sized, ...extra } : sized;
  return new Promise((resolve, reject) => {
    const req = (secure ? httpsRequest : httpRequest)(
      target,
      { method, agent: secure ? agents.https : agents.http, signal, headers },
      resolve,
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The whole body of a response, as text. */
export async function readText(res: IncomingMessage): Promise<string> {
  let text = "";
  res.setEncoding("utf8");
  for await (const chunk of res) text += chunk;
  return text;
}
