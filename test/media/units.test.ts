import { mkdirSync, mkdtempSync, readdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bestPhoto } from "../../connectors/telegram/media.js";
import { imageProblem, sniffImage } from "../../src/media/images.js";
import { isReadableText, safeName, saveToInbox } from "../../src/media/inbox.js";
import { isEmptyTranscript } from "../../src/media/speech.js";
import { jpeg, png } from "./images.fixture.js";

describe("media helpers", () => {
  it("reads the type and size of JPEG, PNG, GIF and WebP headers, and nothing else", () => {
    expect(sniffImage(jpeg(1280, 960))).toMatchObject({ mime: "image/jpeg", width: 1280, height: 960 });
    expect(sniffImage(png(3, 2))).toMatchObject({ mime: "image/png", width: 3, height: 2 });
    const gif = Buffer.from([...Buffer.from("GIF89a"), 0x40, 0x01, 0xf0, 0x00]);
    expect(sniffImage(gif)).toMatchObject({ mime: "image/gif", width: 320, height: 240 });
    const webp = Buffer.alloc(30);
    webp.write("RIFF", 0, "latin1");
    webp.write("WEBPVP8X", 8, "latin1");
    webp.writeUIntLE(799, 24, 3);
    webp.writeUIntLE(599, 27, 3);
    expect(sniffImage(webp)).toMatchObject({ mime: "image/webp", width: 800, height: 600 });
    expect(sniffImage(Buffer.from("%PDF-1.7"))).toBeUndefined();
    expect(imageProblem(undefined, 1568)).toMatch(/JPEG, PNG, GIF and WebP/);
  });

  it("refuses an image whose header says it has no pixels (cut short, or not an image), saying why", () => {
    for (const image of [png(0, 0), png(640, 0), jpeg(0, 480)]) {
      expect(imageProblem(sniffImage(image), 1568)).toMatch(/no pixels/);
    }
    expect(imageProblem(sniffImage(png(640, 480)), 1568)).toBeUndefined();
  });

  it("picks the largest Telegram photo size that fits, else the smallest", () => {
    const size = (width: number, height: number) => ({ file_id: `${width}`, file_unique_id: `${width}`, width, height });
    const sizes = [size(90, 67), size(1280, 960), size(320, 240), size(2560, 1920)];
    expect(bestPhoto(sizes, 1568).file_id).toBe("1280");
    expect(bestPhoto(sizes, 3000).file_id).toBe("2560");
    expect(bestPhoto(sizes, 64).file_id).toBe("90");
  });

  it("names inbox files safely and never overwrites one", async () => {
    expect(safeName("../../etc/passwd")).toBe("passwd");
    expect(safeName(".bashrc")).toBe("bashrc");
    expect(safeName("a\u0000b<>.txt")).toBe("a_b__.txt");
    expect(safeName("")).toBe("file");
    const root = mkdtempSync(join(tmpdir(), "hermes-inbox-"));
    const saved = await Promise.all([1, 2, 3].map((n) => saveToInbox(root, "notes.md", Buffer.from(String(n)))));
    expect(saved.sort()).toEqual(["inbox/notes-2.md", "inbox/notes-3.md", "inbox/notes.md"]);
    expect(readdirSync(join(root, "inbox"))).toHaveLength(3);
  });

  it("keeps no file when the inbox folder is a symbolic link out of the files folder", async () => {
    const root = mkdtempSync(join(tmpdir(), "hermes-inbox-"));
    const outside = mkdtempSync(join(tmpdir(), "hermes-outside-"));
    mkdirSync(join(root, "files"));
    symlinkSync(outside, join(root, "files", "inbox"));
    await expect(saveToInbox(join(root, "files"), "notes.md", Buffer.from("x"))).rejects.toThrow(/not a folder \(a symbolic link\?\)/);
    expect(readdirSync(outside)).toEqual([]);
  });

  it("tells text a file tool can read from binary", () => {
    expect(isReadableText("a.txt", "text/plain", Buffer.from("hello"))).toBe(true);
    expect(isReadableText("a.pdf", "application/pdf", Buffer.from("%PDF-1.7\n\0\0"))).toBe(false);
    expect(isReadableText("a.bin", "application/pdf", Buffer.from("looks like text"))).toBe(false);
    expect(isReadableText("data", "", Buffer.from("plain words"))).toBe(true);
  });

  it("counts silence, noise tags and punctuation as no words", () => {
    for (const t of ["", "  ", "[BLANK_AUDIO]", "(music)", "...", "*silence*", " [Music] . "]) expect(isEmptyTranscript(t)).toBe(true);
    expect(isEmptyTranscript("ok")).toBe(false);
    expect(isEmptyTranscript("[laughs] call mum")).toBe(false);
  });
});
