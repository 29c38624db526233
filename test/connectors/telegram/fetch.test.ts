import { once } from "node:events";
import { Agent, createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { botApiFetch } from "../../../connectors/telegram/network.js";

interface Seen {
  method: string;
  headers: IncomingMessage["headers"];
  body: string;
}

describe("grammY's fetch over node:http", () => {
  let server: Server;
  let url: string;
  const seen: Seen[] = [];
  const agent = new Agent({ keepAlive: true });
  beforeEach(async () => {
    seen.length = 0;
    server = createServer(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      seen.push({ method: req.method ?? "", headers: req.headers, body });
      if (req.url === "/hang") return;
      res.writeHead(req.url === "/missing" ? 404 : 200, { "content-type": "application/json" });
      res.end(JSON.stringify(req.url === "/missing" ? { ok: false, error_code: 404 } : { ok: true, result: { echoed: body } }));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    agent.destroy();
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  });

  it("posts a JSON payload with its length and answers with the JSON, whatever the status", async () => {
    const body = JSON.stringify({ chat_id: 1, text: "grüße" });
    const answer = await botApiFetch(`${url}/botT/sendMessage`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      agent,
    });
    expect(await answer.json()).toEqual({ ok: true, result: { echoed: body } });
    expect(seen[0]?.headers["content-length"]).toBe(String(Buffer.byteLength(body)));
    expect(seen[0]?.method).toBe("POST");
    const missing = await botApiFetch(`${url}/missing`, { method: "POST", body: "{}", agent });
    expect([missing.ok, missing.status]).toEqual([false, 404]);
    expect(await missing.json()).toEqual({ ok: false, error_code: 404 });
  });

  it("streams a multipart payload given as a stream", async () => {
    const parts = ["--b\r\n", 'content-disposition: form-data; name="chat_id"\r\n\r\n1\r\n', "--b--\r\n"];
    const answer = await botApiFetch(`${url}/botT/sendDocument`, {
      method: "POST",
      headers: { "content-type": "multipart/form-data; boundary=b" },
      body: Readable.from(parts),
      agent,
    });
    expect(await answer.json()).toEqual({ ok: true, result: { echoed: parts.join("") } });
  });

  it("rejects when its signal aborts a call that gets no answer, and when nothing listens", async () => {
    const controller = new AbortController();
    const pending = botApiFetch(`${url}/hang`, { method: "POST", body: "{}", agent, signal: controller.signal });
    while (seen.length === 0) await new Promise((r) => setImmediate(r));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    await expect(botApiFetch("http://127.0.0.1:1/botT/getMe")).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });
});
