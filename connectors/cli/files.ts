/** Files sent over the CLI socket: uploaded in pieces on one connection, then heard or seen like those from the phone. */
import { extname } from "node:path";
import type { Config } from "../../src/config/schema.js";
import type { Intake } from "../../src/media/types.js";
import { type AskFile, MAX_UPLOAD_BYTES } from "./protocol.js";

const AUDIO_TYPES: Record<string, string> = {
  ".ogg": "audio/ogg",
  ".oga": "audio/ogg",
  ".opus": "audio/ogg",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
  ".m4a": "audio/mp4",
  ".webm": "audio/webm",
  ".flac": "audio/flac",
};

/** One connection's uploads; gone with the connection. At most MAX_UPLOAD_BYTES are kept at a time. */
export function createUploads() {
  const uploads = new Map<string, Buffer[]>();
  /** The bytes kept now: an upload an `ask` took no longer counts. */
  let total = 0;
  /** Ids are never given twice on a connection, so a new upload cannot continue one still kept. */
  let made = 0;
  return {
    /** Adds a base64 piece; the upload's id, or why not. */
    add(data: string, upload?: string): { ok: true; upload: string; bytes: number } | { ok: false; message: string } {
      const bytes = Buffer.from(data, "base64");
      if (total + bytes.length > MAX_UPLOAD_BYTES)
        return { ok: false, message: `uploads on one connection may hold at most ${MAX_UPLOAD_BYTES} bytes` };
      const id = upload ?? `u${made + 1}`;
      const pieces = uploads.get(id);
      if (upload && !pieces) return { ok: false, message: `there is no upload ${upload} on this connection` };
      total += bytes.length;
      if (pieces) pieces.push(bytes);
      else {
        made++;
        uploads.set(id, [bytes]);
      }
      return { ok: true, upload: id, bytes: (uploads.get(id) ?? []).reduce((n, b) => n + b.length, 0) };
    },
    /** The upload's bytes, handed over once. */
    take(upload: string): Buffer | undefined {
      const pieces = uploads.get(upload);
      if (!pieces) return undefined;
      uploads.delete(upload);
      const bytes = Buffer.concat(pieces);
      total -= bytes.length;
      return bytes;
    },
  };
}

export function isAskFile(value: unknown): value is AskFile {
  const f = value as AskFile;
  return (
    typeof f === "object" &&
    f !== null &&
    typeof f.upload === "string" &&
    (f.kind === "audio" || f.kind === "image") &&
    typeof f.name === "string"
  );
}

/** What the file becomes: the message for the model, or a reply saying why not. */
export async function takeFile(config: Config, file: AskFile, bytes: Buffer, caption: string): Promise<Intake> {
  const { intake } = await import("../../src/media/intake.js");
  const mime = file.kind === "audio" ? (AUDIO_TYPES[extname(file.name).toLowerCase()] ?? "application/octet-stream") : "";
  const name = file.name.split(/[/\\]/).pop() || (file.kind === "audio" ? "audio.ogg" : "image");
  return intake({ kind: file.kind === "audio" ? "voice" : "image", bytes, name, mime, caption }, config);
}
