import { rmSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { randomBytes } from "../random.js";
import type { ImageInfo } from "./types.js";

/** The type and pixel size of a JPEG, PNG, GIF or WebP image from its header; undefined for anything else. */
export function sniffImage(b: Buffer): ImageInfo | undefined {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47)
    return { mime: "image/png", ext: "png", width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length >= 10 && b.toString("latin1", 0, 4) === "GIF8")
    return { mime: "image/gif", ext: "gif", width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  if (b.length >= 30 && b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP") return webpInfo(b);
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) return jpegInfo(b);
  return undefined;
}

function webpInfo(b: Buffer): ImageInfo | undefined {
  const chunk = b.toString("latin1", 12, 16);
  const info = (width: number, height: number): ImageInfo => ({ mime: "image/webp", ext: "webp", width, height });
  if (chunk === "VP8X") return info(1 + b.readUIntLE(24, 3), 1 + b.readUIntLE(27, 3));
  if (chunk === "VP8L") {
    const bits = b.readUInt32LE(21);
    return info(1 + (bits & 0x3fff), 1 + ((bits >> 14) & 0x3fff));
  }
  if (chunk === "VP8 ") return info(b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff);
  return undefined;
}

/** Walks the JPEG segments to the first start-of-frame, which holds the size. */
function jpegInfo(b: Buffer): ImageInfo | undefined {
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1] as number;
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) return { mime: "image/jpeg", ext: "jpg", height: b.readUInt16BE(at + 5), width: b.readUInt16BE(at + 7) };
    at += 2 + b.readUInt16BE(at + 2);
  }
  return undefined;
}

/**
 * Stores an image in `media/` beside the database (not under the files root the tools can read and
 * write); returns its reference, relative to the data directory.
 */
export async function saveImage(storagePath: string, bytes: Buffer, info: ImageInfo): Promise<string> {
  const day = new Date().toISOString().slice(0, 10);
  const ref = `media/${day}/${randomBytes(8).toString("hex")}.${info.ext}`;
  const path = join(dirname(storagePath), ref);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, bytes, { mode: 0o600 });
  return ref;
}

/** A reference saveImage made (no other path is read or removed through one). */
const IMAGE_REF = /^media\/[\w-]+\/\w+\.\w+$/;

/** The stored images as base64, for the one request that carries them; a file that is gone is left out. */
export async function loadImages(storagePath: string, refs: string[]): Promise<string[]> {
  const loaded = await Promise.all(
    refs.map((ref) => (IMAGE_REF.test(ref) ? readFile(join(dirname(storagePath), ref)).catch(() => undefined) : undefined)),
  );
  return loaded.flatMap((b) => (b ? [b.toString("base64")] : []));
}

/**
 * Removes stored images (an API request's without a session, which keeps nothing), at once: a few small
 * files. One already gone, or that cannot be removed, is left.
 */
export function removeImages(storagePath: string, refs: readonly string[]): void {
  for (const ref of refs) {
    try {
      if (IMAGE_REF.test(ref)) rmSync(join(dirname(storagePath), ref), { force: true });
    } catch {
      // not ours to remove (its folder's mode changed): left, as a file already gone is
    }
  }
}

/** The text a message carries in place of its image, in every request (so the prompt prefix stays byte-stable). */
export function imagePlaceholder(info: ImageInfo, ref: string): string {
  return `[photo: ${info.width}×${info.height} ${info.ext.toUpperCase()}, stored as ${ref}]`;
}

/** Why an image is not taken, or undefined when it is fine. */
export function imageProblem(info: ImageInfo | undefined, maxPx: number): string | undefined {
  if (!info) return "I can only look at JPEG, PNG, GIF and WebP images.";
  // A header that says 0 pixels is a file cut short or a broken one: the model's server would refuse it with an error.
  if (info.width === 0 || info.height === 0)
    return `That image says it is ${info.width}×${info.height}: it has no pixels (cut short or damaged?). Send it again.`;
  if (Math.max(info.width, info.height) <= maxPx) return undefined;
  return `That image is ${info.width}×${info.height}, larger than model.max_image_px (${maxPx}). Send it as a photo (Telegram then sends a smaller copy) or raise model.max_image_px in hermes.yaml.`;
}
