import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/**
 * POSTs JSON over node:http(s) on a keep-alive agent and resolves with the response as it starts.
 * On Node 20 this takes about a millisecond less per call than fetch, which adds up when a queue of
 * chats waits on one model.
 */
export function postJson(url: string, body: string, signal: AbortSignal): Promise<IncomingMessage> {
  const target = new URL(url);
  const secure = target.protocol === "https:";
  return new Promise((resolve, reject) => {
    const req = (secure ? httpsRequest : httpRequest)(
      target,
      {
        method: "POST",
        agent: secure ? agents.https : agents.http,
        signal,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
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
