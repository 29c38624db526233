import { readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import { type AskFile, MAX_UPLOAD_BYTES } from "../../connectors/cli/protocol.js";
import type { Client } from "./client.js";

/** Raw bytes per upload line: base64 of this stays well under the 1 MiB line limit. */
const PIECE_BYTES = 512 * 1024;

/** The file's bytes, or an error a user can act on (missing, not a file, too large). */
export async function readFileToSend(path: string): Promise<Buffer> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) throw new Error(`${path} is not a file`);
  if (info.size > MAX_UPLOAD_BYTES) throw new Error(`${path} is ${info.size} bytes; files may be at most ${MAX_UPLOAD_BYTES} bytes`);
  return readFile(path);
}

/** Sends the file in pieces on this connection; the reference an `ask` carries. */
export async function upload(client: Client, bytes: Buffer, path: string, kind: AskFile["kind"]): Promise<AskFile> {
  let id: string | undefined;
  for (let at = 0; at < bytes.length || id === undefined; at += PIECE_BYTES) {
    const reply = await client.call({
      op: "upload",
      data: bytes.subarray(at, at + PIECE_BYTES).toString("base64"),
      ...(id && { upload: id }),
    });
    if (reply.type !== "result" || !reply.ok)
      throw new Error(
        `the daemon refused the upload: ${reply.type === "error" ? reply.error.message : reply.type === "result" ? reply.message : reply.type}`,
      );
    id = (reply.data as { upload: string }).upload;
  }
  return { upload: id, kind, name: basename(path) };
}
