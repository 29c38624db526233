/** Telegram messages that are not plain text: files are fetched here and handed to src/media; everything else is answered. */
import type { Api } from "grammy";
import type { Message, PhotoSize } from "grammy/types";
import type { Config } from "../../src/config/schema.js";
import type { Logger } from "../../src/log.js";
import { formatSize } from "../../src/media/inbox.js";
import { intake, refuseBeforeDownload } from "../../src/media/intake.js";
import { type Incoming, type Intake, MAX_DOWNLOAD_BYTES } from "../../src/media/types.js";
import { readUpTo } from "../../src/net/body.js";
import { addressedCaption } from "./address.js";
import { inTopic } from "./surface.js";
import { topicOf } from "./topics.js";

export interface MediaDeps {
  api: Api;
  /** Downloads are `<apiRoot>/file/bot<token>/<file_path>`. */
  apiRoot: string;
  token: string;
  config: () => Config;
  log: Logger;
}

/** A file to fetch: its id and what Telegram says of it. */
interface Wanted {
  kind: Incoming["kind"];
  fileId: string;
  name: string;
  mime: string;
  size?: number;
  durationS?: number;
}

const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/webp", "image/gif"]);

/** Message kinds hermes cannot use yet, by the field that marks them, in words. */
const UNUSABLE: [keyof Message, string][] = [
  ["sticker", "stickers"],
  ["animation", "GIFs"],
  ["video", "videos"],
  ["location", "locations"],
  ["venue", "venues"],
  ["contact", "contacts"],
  ["poll", "polls"],
  ["dice", "dice"],
  ["game", "games"],
  ["story", "stories"],
  ["invoice", "invoices"],
];

/** `ignore`: not addressed to the bot (a group message that does not mention it); otherwise what to do. */
export type MediaOutcome = Intake | { type: "ignore" };

/** What a non-text message from an allowed user becomes: a message for the model, or a reply that says why not. */
export async function takeMessage(d: MediaDeps, message: Message, me: { id: number; username: string }): Promise<MediaOutcome> {
  const caption = addressedCaption(message, me);
  if (caption === undefined) return { type: "ignore" };
  const wanted = wantedFile(message, d.config().model.max_image_px);
  if (!wanted) {
    const kind = UNUSABLE.find(([field]) => message[field] !== undefined)?.[1] ?? "this kind of message";
    return { type: "reply", text: `I can't use ${kind} yet. Send me text, a voice note, a photo or a file.` };
  }
  const refused = refuseBeforeDownload(d.config(), wanted.kind, wanted.size, wanted.durationS);
  if (refused) return { type: "reply", text: refused };
  // In the topic the file came from (a forum's), where the answer will be, not in its General topic.
  void d.api.sendChatAction(message.chat.id, "typing", inTopic(topicOf(message))).catch(() => {});
  const fetched = await download(d, wanted);
  if ("refused" in fetched) return { type: "reply", text: fetched.refused };
  if ("failed" in fetched)
    return { type: "reply", text: `I could not fetch that file from Telegram: ${fetched.failed}. Send it again in a moment.` };
  const { bytes } = fetched;
  return intake({ kind: wanted.kind, bytes, name: wanted.name, mime: wanted.mime, durationS: wanted.durationS, caption }, d.config());
}

/** The file a message carries, if hermes can use it: voice, audio, video notes, photos (the largest size that fits), documents. */
function wantedFile(m: Message, maxPx: number): Wanted | undefined {
  if (m.voice)
    return {
      kind: "voice",
      fileId: m.voice.file_id,
      name: "voice.ogg",
      mime: m.voice.mime_type ?? "audio/ogg",
      size: m.voice.file_size,
      durationS: m.voice.duration,
    };
  if (m.audio) {
    const { audio } = m;
    return {
      kind: "voice",
      fileId: audio.file_id,
      name: audio.file_name ?? "audio.mp3",
      mime: audio.mime_type ?? "audio/mpeg",
      size: audio.file_size,
      durationS: audio.duration,
    };
  }
  if (m.video_note) {
    const note = m.video_note;
    return {
      kind: "voice",
      fileId: note.file_id,
      name: "video-note.mp4",
      mime: "video/mp4",
      size: note.file_size,
      durationS: note.duration,
    };
  }
  if (m.photo?.length) {
    const size = bestPhoto(m.photo, maxPx);
    return { kind: "image", fileId: size.file_id, name: "photo.jpg", mime: "image/jpeg", size: size.file_size };
  }
  if (m.document) {
    const doc = m.document;
    const mime = doc.mime_type ?? "";
    return {
      kind: IMAGE_TYPES.has(mime) ? "image" : "file",
      fileId: doc.file_id,
      name: doc.file_name ?? "file",
      mime,
      size: doc.file_size,
    };
  }
  return undefined;
}

/** The largest of Telegram's sizes whose long side fits `maxPx` (Telegram makes them: no resizing here); else the smallest. */
export function bestPhoto(sizes: PhotoSize[], maxPx: number): PhotoSize {
  const bySize = [...sizes].sort((a, b) => a.width * a.height - b.width * b.height);
  return bySize.filter((s) => Math.max(s.width, s.height) <= maxPx).at(-1) ?? (bySize[0] as PhotoSize);
}

/**
 * getFile, then the download; the bytes, a refusal for the user, or what went wrong (never the URL: it holds
 * the token). A message need not give a file's size, so getFile's is checked too, and the download is read up
 * to the limit only (a local Bot API server serves files of up to 2 GB).
 */
async function download(d: MediaDeps, wanted: Wanted): Promise<{ bytes: Buffer } | { refused: string } | { failed: string }> {
  try {
    const file = await d.api.getFile(wanted.fileId);
    if (!file.file_path) return { failed: "Telegram gave no download path" };
    const refused = refuseBeforeDownload(d.config(), wanted.kind, file.file_size, wanted.durationS);
    if (refused) return { refused };
    const res = await fetch(`${d.apiRoot.replace(/\/+$/, "")}/file/bot${d.token}/${file.file_path}`, {
      signal: AbortSignal.timeout(120_000),
    });
    if (!res.ok) return { failed: `the download answered HTTP ${res.status}` };
    const bytes = await readUpTo(res, MAX_DOWNLOAD_BYTES);
    if (!bytes)
      return { refused: `That file is over ${formatSize(MAX_DOWNLOAD_BYTES)}; I can take files up to ${formatSize(MAX_DOWNLOAD_BYTES)}.` };
    return { bytes };
  } catch (err) {
    const message = (err as Error).message.replaceAll(d.token, "<token>");
    d.log.warn({ err: message }, "telegram file download failed");
    return { failed: message };
  }
}
