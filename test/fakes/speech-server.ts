/**
 * A fake OpenAI-compatible speech-to-text server on 127.0.0.1: `POST /v1/audio/transcriptions` parses the
 * multipart body with the platform's form-data parser, as the real servers do, and refuses what they
 * refuse (no `file` part, a file without a name or type, no `model`, an unknown `response_format`).
 * `GET /v1/models` lists its models. Tests script the transcripts and read what was sent.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Readable } from "node:stream";
import { createChanges, waitFor } from "../helpers/wait.js";

export interface TranscriptionRequest {
  fileName: string;
  fileType: string;
  bytes: Buffer;
  model: string;
  language?: string;
  responseFormat?: string;
  authorization?: string;
}

export interface FakeSpeech {
  /** For `speech.base_url`. */
  url: string;
  requests: TranscriptionRequest[];
  models: string[];
  /** The next transcripts, in order; when none is queued the answer is "hello from a voice note". */
  transcripts: string[];
  /** Answer every transcription with this HTTP status instead. */
  failWith?: number;
  /** The next this many transcriptions are recorded and never answered. */
  hang: number;
  /** Resolves once at least `n` transcription requests have arrived. */
  waitForRequests(n: number): Promise<void>;
  close(): Promise<void>;
}

const FORMATS = new Set(["json", "text", "verbose_json", "srt", "vtt"]);

export async function startFakeSpeech(): Promise<FakeSpeech> {
  const sockets = new Set<Socket>();
  const changes = createChanges();
  const fake: FakeSpeech = {
    url: "",
    requests: [],
    models: ["Systran/faster-whisper-small"],
    transcripts: [],
    hang: 0,
    waitForRequests: async (n) => {
      await waitFor(() => fake.requests.length >= n, { changes, message: () => `${n} requests (${fake.requests.length} came)` });
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, "close").catch(() => {});
    },
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "").split("?")[0];
    if (req.method === "GET" && path === "/v1/models")
      return json(res, 200, { object: "list", data: fake.models.map((id) => ({ id, object: "model" })) });
    if (req.method !== "POST" || path !== "/v1/audio/transcriptions") return json(res, 404, { detail: "Not Found" });
    const type = req.headers["content-type"] ?? "";
    if (!type.startsWith("multipart/form-data")) return json(res, 415, { detail: "expected multipart/form-data" });
    const form = await new Request("http://fake/", {
      method: "POST",
      headers: { "content-type": type },
      body: Readable.toWeb(req) as ReadableStream,
      duplex: "half",
    } as RequestInit).formData();
    const file = form.get("file");
    if (!(file instanceof File)) return json(res, 422, { detail: [{ loc: ["body", "file"], msg: "field required" }] });
    if (!file.name || !file.type) return json(res, 422, { detail: "the file part needs a file name and a content type" });
    const model = form.get("model");
    if (typeof model !== "string" || !model) return json(res, 422, { detail: [{ loc: ["body", "model"], msg: "field required" }] });
    const responseFormat = (form.get("response_format") as string | null) ?? undefined;
    if (responseFormat && !FORMATS.has(responseFormat)) return json(res, 400, { detail: `unknown response_format ${responseFormat}` });
    fake.requests.push({
      fileName: file.name,
      fileType: file.type,
      bytes: Buffer.from(await file.arrayBuffer()),
      model,
      language: (form.get("language") as string | null) ?? undefined,
      responseFormat,
      authorization: req.headers.authorization,
    });
    changes.notify();
    if (fake.hang > 0) {
      fake.hang--;
      return;
    }
    if (fake.failWith) return json(res, fake.failWith, { error: { message: `scripted ${fake.failWith}` } });
    if (!fake.models.includes(model)) return json(res, 404, { error: { message: `model '${model}' is not installed` } });
    const text = fake.transcripts.shift() ?? "hello from a voice note";
    if (responseFormat === "text") return void res.end(text);
    json(res, 200, { text });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
